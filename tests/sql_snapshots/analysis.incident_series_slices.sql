-- incident_series.sql of each of {services} as a whole and of each of its routes, tenants and instances worth
-- judging on their own, in one pass over their attempts queued in [start, end): dimension '' (value '') on the whole
-- service's rows, else 'route', 'tenant' or 'instance' and its value. A slice is kept when its dimension has two named values
-- or more, it has {min_minutes} minutes with {min_attempts} attempts (enough for a baseline) and it is among the
-- {max_slices} busiest of its dimension: a project's thousands of tenants are neither returned nor judged one by
-- one. The window's aggregated core reads its minutes' rows from incident_minutes (the same rows: a minute lies
-- inside one hour), its edges group request_buckets (analysis/rollups/aggregates.py): the incidents step reads the same
-- hours every minute.
SELECT * EXCEPT (busy, total, named, slice_rank)
FROM
(
    SELECT *,
           uniqExact(value) OVER (PARTITION BY service, dimension) AS named,
           dense_rank() OVER (PARTITION BY service, dimension ORDER BY total DESC, value) AS slice_rank
    FROM
    (
        SELECT *,
               countIf(attempts >= {min_attempts:UInt32}) OVER (PARTITION BY service, dimension, value) AS busy,
               sum(attempts) OVER (PARTITION BY service, dimension, value) AS total
        FROM
        (
            SELECT service, minute, dimension, value, attempts, errors, t_queue_q, t_queue_count, t_conn_q, t_conn_count,
                   t_first_token_q, t_first_token_count, t_stream_q, t_stream_count, t_post_q, t_post_count,
                   t_retry_q, t_retry_count, ttft_q, ttft_count, total_q, total_count
            FROM incident_minutes
            WHERE project_id = {project_id:UInt32} AND service IN {services:Array(String)} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
  AND (hour, computed_at) IN (
      SELECT hour, max(computed_at) FROM aggregated_hours
      WHERE project_id = {project_id:UInt32} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
      GROUP BY hour)
            UNION ALL
            SELECT *
            FROM
            (
                SELECT service, toStartOfMinute(queued_at) AS minute,
multiIf(grouping(route) = 0, 'route', grouping(tenant) = 0, 'tenant', grouping(instance) = 0, 'instance', '')
    AS dimension,
multiIf(dimension = 'route', route, dimension = 'tenant', tenant, dimension = 'instance', instance, '') AS value,
count() AS attempts,
countIf(status = 'error') AS errors,
quantilesExactInclusive(0.5, 0.95)(t_queue_ms) AS t_queue_q, count(t_queue_ms) AS t_queue_count,
quantilesExactInclusive(0.5, 0.95)(t_conn_ms) AS t_conn_q, count(t_conn_ms) AS t_conn_count,
quantilesExactInclusive(0.5, 0.95)(t_first_token_ms) AS t_first_token_q, count(t_first_token_ms) AS t_first_token_count,
quantilesExactInclusive(0.5, 0.95)(t_stream_ms) AS t_stream_q, count(t_stream_ms) AS t_stream_count,
quantilesExactInclusive(0.5, 0.95)(t_post_ms) AS t_post_q, count(t_post_ms) AS t_post_count,
quantilesExactInclusive(0.5, 0.95)(t_retry_ms) AS t_retry_q, count(t_retry_ms) AS t_retry_count,
quantilesExactInclusive(0.5, 0.95)(ttft_ms) AS ttft_q, count(ttft_ms) AS ttft_count,
quantilesExactInclusive(0.5, 0.95)(total_ms) AS total_q, count(total_ms) AS total_count
                FROM request_buckets
                WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service IN {services:Array(String)}
                  AND ((start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {core_start:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {core_start:DateTime64(9, 'UTC')})
 OR (start_at >= {core_end:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {core_end:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}))
                GROUP BY GROUPING SETS ((service, minute), (service, route, minute), (service, tenant, minute),
                                        (service, instance, minute))
            )
            WHERE dimension = '' OR value != ''
        )
    )
)
WHERE dimension = '' OR (named >= 2 AND busy >= {min_minutes:UInt32} AND slice_rank <= {max_slices:UInt32})
ORDER BY service, dimension, value, minute
