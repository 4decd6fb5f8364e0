-- Per 1-minute window of queued_at, over one service's attempts queued in [start, end): _churn_columns.sql's
-- counts, p95 and stddev. The window's aggregated core reads its minutes' rows from churn_minutes (every route's,
-- or the route asked for), its edges group request_buckets (analysis/rollups/aggregates.py): a minute lies inside one hour,
-- so the rows are the same either way. A tenant filter reads every attempt (core_start = core_end = end).
SELECT *
FROM
(
    SELECT minute, attempts, new_connections, connection_known, retries, successes, t_first_token_p95,
           t_first_token_stddev, ttft_p95, ttft_stddev
    FROM churn_minutes
    WHERE project_id = {project_id:UInt32} AND service = {service:String}
      AND by_route = ({route:String} != '') AND route = {route:String} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
  AND (hour, computed_at) IN (
      SELECT hour, max(computed_at) FROM aggregated_hours
      WHERE project_id = {project_id:UInt32} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
      GROUP BY hour)
    UNION ALL
    SELECT toStartOfMinute(queued_at) AS minute, count() AS attempts,
countIf(connection_reused = false) AS new_connections,
countIf(connection_reused IS NOT NULL) AS connection_known,
countIf(attempt > 1) AS retries,
countIf(is_final_attempt AND status != 'error') AS successes,
quantileExactInclusiveIf(0.95)(t_first_token_ms, status != 'error') AS t_first_token_p95,
stddevSampIf(t_first_token_ms, status != 'error') AS t_first_token_stddev,
quantileExactInclusiveIf(0.95)(ttft_ms, status != 'error') AS ttft_p95,
stddevSampIf(ttft_ms, status != 'error') AS ttft_stddev
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String}
      AND ((start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {core_start:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {core_start:DateTime64(9, 'UTC')})
 OR (start_at >= {core_end:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {core_end:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')})) AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
    GROUP BY minute
)
ORDER BY minute
