-- Retry counts per service, hour and route of one project over the whole hours [start, end), from request_buckets,
-- as version {computed_at} of those hours' rows (store migration 0029).
INSERT INTO retry_hours
SELECT project_id, service, toStartOfHour(queued_at) AS hour, route,
       countIf(is_final_attempt) AS runs,
countIf(is_final_attempt AND t_retry_ms IS NOT NULL) AS known_runs,
countIf(is_final_attempt AND status != 'error') AS successful_runs,
countIf(is_final_attempt AND t_retry_ms IS NOT NULL AND run_attempt_count > 1) AS runs_with_retries,
sumIf(toInt64(run_attempt_count) - 1, is_final_attempt AND t_retry_ms IS NOT NULL) AS extra_attempts,
count() AS attempts,
countIf(status = 'error') AS failed_attempts,
sumIf(toUInt64(coalesce(input_tokens, 0)), status = 'error') AS wasted_input_tokens,
sumIf(toUInt64(coalesce(output_tokens, 0)), status = 'error') AS wasted_output_tokens,
sumMapIf([toString(retry_cause)], [toUInt64(1)], status = 'error') AS causes,
       {computed_at:DateTime64(3, 'UTC')}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour)
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
GROUP BY project_id, service, hour, route
