-- scheduler_sweep.sql's bounded rows from `window_rows` (the window's minutes and hours per instance-bucket and
-- tenant, from its core and edges): grouped, ranked, the rest pooled. See scheduler_sweep.sql.
SELECT
    service,
    is_instance_row,
    NOT kept AS is_others,
    if(kept, instance, '') AS instance_name,
    bucket_start_ms,
    if(kept, tenant, '') AS tenant_name,
    if(kept, any(instance_cap), NULL) AS cap,
    sum(backlog_ms) AS backlog_ms_sum,
    sumIf(backlog_ms, instance_capped) AS capped_backlog_ms,
    sumIf(backlog_ms, instance_cap IS NULL) AS uncapped_backlog_ms,
    sum(gap_ms) AS gap_ms_sum,
    sum(queue_ms) AS queue_ms_sum,
    sum(in_flight_ms) AS in_flight_ms_sum,
    sum(covered_ms) AS covered_ms_sum,
    max(queue_max) AS queue_max_all,
    max(in_flight_max) AS in_flight_max_all,
    sum(in_flight_backlog_ms) AS in_flight_backlog_ms_sum,
    sum(attempts) AS attempts_sum,
    if(kept, 0, any(names) - {limit:UInt32}) AS folded
FROM
(
    -- kept: the row's instance (instance rows) or tenant (tenant rows) ranks within {limit}
    SELECT *, if(is_instance_row, instance_rank, tenant_rank) <= {limit:UInt32} AS kept
    FROM
    (
        SELECT *,
               dense_rank() OVER (PARTITION BY service, is_instance_row ORDER BY instance_backlog_ms DESC, instance_in_flight_ms DESC, instance) AS instance_rank,
               row_number() OVER (PARTITION BY service, is_instance_row ORDER BY in_flight_backlog_ms DESC, tenant) AS tenant_rank
        FROM
        (
            -- each instance's totals over the window, whether it ever reported a cap, and how many instances
            -- (instance rows) or tenants (tenant rows) there are
            SELECT *, sum(backlog_ms) OVER i AS instance_backlog_ms, sum(in_flight_ms) OVER i AS instance_in_flight_ms,
                   max(instance_cap IS NOT NULL) OVER i AS instance_capped,
                   uniqExact(if(is_instance_row, instance, tenant)) OVER (PARTITION BY service, is_instance_row) AS names
            FROM
            (
                -- the window's rows per instance and bucket (tenant = '') and per tenant (instance = ''): its
                -- aggregated core's minutes and hours (analysis/rollups/aggregates.py) with the edges swept from attempts
                SELECT service, is_instance_row, instance, bucket_start_ms, tenant, argMax(cap, cap_at) AS instance_cap,
                       sum(backlog_ms) AS backlog_ms, sum(gap_ms) AS gap_ms, sum(queue_ms) AS queue_ms,
                       sum(in_flight_ms) AS in_flight_ms, sum(covered_ms) AS covered_ms, max(queue_max) AS queue_max,
                       max(in_flight_max) AS in_flight_max, sum(in_flight_backlog_ms) AS in_flight_backlog_ms,
                       sum(attempts) AS attempts
                FROM window_rows
                GROUP BY service, is_instance_row, instance, bucket_start_ms, tenant
            )
            WINDOW i AS (PARTITION BY service, is_instance_row, instance)
        )
    )
)
GROUP BY service, is_instance_row, kept, instance_name, bucket_start_ms, tenant_name
ORDER BY service, is_instance_row DESC, is_others, instance_name, bucket_start_ms, in_flight_backlog_ms_sum DESC, tenant_name
