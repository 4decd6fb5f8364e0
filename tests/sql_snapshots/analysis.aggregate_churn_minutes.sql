-- churn_minutes of one project over the whole hours [start, end), from request_buckets, as version {computed_at} of
-- those hours' rows (store migration 0039): one pass, a row per service and minute (by_route = false: every route
-- together) and per service, route and minute (grouping(route) is 1 where the grouping set leaves route out).
INSERT INTO churn_minutes
SELECT project_id, service, toStartOfHour(minute) AS hour, grouping(route) = 0 AS by_route, route,
       toStartOfMinute(queued_at) AS minute, count() AS attempts,
countIf(connection_reused = false) AS new_connections,
countIf(connection_reused IS NOT NULL) AS connection_known,
countIf(attempt > 1) AS retries,
countIf(is_final_attempt AND status != 'error') AS successes,
quantileExactInclusiveIf(0.95)(t_first_token_ms, status != 'error') AS t_first_token_p95,
stddevSampIf(t_first_token_ms, status != 'error') AS t_first_token_stddev,
quantileExactInclusiveIf(0.95)(ttft_ms, status != 'error') AS ttft_p95,
stddevSampIf(ttft_ms, status != 'error') AS ttft_stddev,
       {computed_at:DateTime64(3, 'UTC')}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour)
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
GROUP BY GROUPING SETS ((project_id, service, minute), (project_id, service, route, minute))
