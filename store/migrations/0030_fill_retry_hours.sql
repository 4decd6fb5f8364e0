-- retry_hours of the hours aggregated before 0029, at each hour's current aggregate version (aggregated_hours). The
-- counts as analysis/sql/_retry_counts.sql writes them, over each hour's current request_buckets rows
-- (materialized_hours).
INSERT INTO retry_hours
SELECT project_id, service, hour, route,
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
       any(version)
FROM
(
    SELECT r.*, toDateTime(toStartOfHour(r.queued_at), 'UTC') AS hour, v.computed_at AS version
    FROM request_buckets AS r
    INNER JOIN
    (
        SELECT project_id, hour, max(computed_at) AS computed_at FROM aggregated_hours GROUP BY project_id, hour
    ) AS v ON v.project_id = r.project_id AND v.hour = toDateTime(toStartOfHour(r.queued_at), 'UTC')
    WHERE (r.project_id, toStartOfHour(r.queued_at), r.computed_at) IN (
              SELECT project_id, hour, max(computed_at) FROM materialized_hours GROUP BY project_id, hour)
)
GROUP BY project_id, service, hour, route
