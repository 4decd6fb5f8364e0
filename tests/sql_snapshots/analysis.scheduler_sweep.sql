-- Scheduler state of each instance of each of {services} (docs/span-convention.md, "Scheduler state over time";
-- empty: every service of the project, as one with service '') over the window [start, end), each service ranked
-- on its own: the scheduler_pieces view's sweep of the attempts queued or in flight during the
-- window's edges (one call: the view leaves out the hours of its aggregated core [core_start, core_end)), with the
-- core's stored minutes and hours (analysis/rollups/aggregates.py; an empty core when core_start = core_end = end), grouped into buckets of {bucket_ms} ms
-- (epoch-aligned; whole minutes when the window has a core). Route and tenant filters do not apply (an instance's
-- queue is every route's and tenant's). Two groupings:
-- * per instance and bucket (tenant = ''): cap (the llm.scheduler.cap of the latest attempt queued so far, so a
--   cap changed mid-window counts from then on; NULL unknown), backlog_ms (queue_depth > 0), gap_ms (... and
--   in_flight < cap), queue_ms / in_flight_ms (integrals, count x ms), maxima, covered_ms;
-- * per tenant (instance = ''): in_flight_backlog_ms, the slot time its attempts held while their
--   instance had a queue, and its attempts.
-- Bounded: the {limit} instances with the most backlog (then in-flight time) and the {limit} tenants with the most
-- slot time during backlog keep their rows; every other instance's rows are pooled per bucket, and every other
-- tenant's into one row (is_others = 1, names ''; folded = how many instances or tenants they hold), so the rows
-- stay at most ({limit} + 1) x buckets + {limit} + 1 however many instances and tenants there are. capped_backlog_ms:
-- backlog of instances that reported a cap at some point (gap_fraction's denominator); uncapped_backlog_ms: backlog
-- in buckets where the instance's cap was still unknown.
WITH window_rows AS
(
    SELECT if(empty({services:Array(String)}), '', service) AS service, is_instance_row, instance, tenant, cap, cap_at,
       backlog_ms, gap_ms, queue_ms, in_flight_ms, covered_ms, queue_max, in_flight_max, in_flight_backlog_ms, attempts,
       if(is_instance_row, intDiv(toInt64(toUnixTimestamp(minute)) * 1000, {bucket_ms:UInt32}) * {bucket_ms:UInt32}, 0) AS bucket_start_ms
FROM scheduler_minutes
WHERE project_id = {project_id:UInt32} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
  AND (hour, computed_at) IN (
      SELECT hour, max(computed_at) FROM aggregated_hours
      WHERE project_id = {project_id:UInt32} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
      GROUP BY hour)
  AND (empty({services:Array(String)}) OR service IN {services:Array(String)})
    UNION ALL
    SELECT if(empty({services:Array(String)}), '', service) AS service, is_instance_row, instance, tenant,
           last_cap AS cap, cap_at, backlog_ms, gap_ms, queue_ms, in_flight_ms, covered_ms, queue_max, in_flight_max, in_flight_backlog_ms, attempts,
           if(is_instance_row, intDiv(bucket_ns, 1000000), 0) AS bucket_start_ms
    FROM scheduler_pieces(project_id = {project_id:UInt32}, services = {services:Array(String)},
                          start = {start:DateTime64(9, 'UTC')}, end = {end:DateTime64(9, 'UTC')},
                          core_start = {core_start:DateTime64(9, 'UTC')},
                          core_end = {core_end:DateTime64(9, 'UTC')}, bucket_ms = {bucket_ms:UInt32})
)
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
SETTINGS
    optimize_aggregators_of_group_by_keys = 0,
    optimize_and_compare_chain = 0,
    optimize_arithmetic_operations_in_aggregate_functions = 0,
    optimize_extract_common_expressions = 0,
    optimize_functions_to_subcolumns = 0,
    optimize_group_by_constant_keys = 0,
    optimize_group_by_function_keys = 0,
    optimize_injective_functions_in_group_by = 0,
    optimize_injective_functions_inside_uniq = 0,
    optimize_limit_by_function_keys = 0,
    optimize_multiif_to_if = 0,
    optimize_normalize_count_variants = 0,
    optimize_or_like_chain = 0,
    optimize_redundant_functions_in_order_by = 0,
    optimize_rewrite_aggregate_function_with_if = 0,
    optimize_rewrite_array_exists_to_has = 0,
    optimize_rewrite_sum_if_to_count_if = 0,
    optimize_syntax_fuse_functions = 0,
    optimize_time_filter_with_preimage = 0,
    optimize_truncate_order_by_after_group_by_keys = 0,
    optimize_uniq_to_count = 0
