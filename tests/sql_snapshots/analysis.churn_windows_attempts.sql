-- churn_windows.sql for a window without an aggregated core: every attempt queued in [start, end) grouped by
-- minute, without the union with churn_minutes (its version test costs a short window ~10 ms of ~40).
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
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
GROUP BY minute
ORDER BY minute
