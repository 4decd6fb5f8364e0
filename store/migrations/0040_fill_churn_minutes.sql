-- churn_minutes of the hours aggregated before 0039, at each hour's current aggregate version (aggregated_hours).
-- The columns as analysis/sql/aggregate_churn_minutes.sql writes them, over each hour's current request_buckets
-- rows (materialized_hours).
INSERT INTO churn_minutes
SELECT project_id, service, toStartOfHour(minute) AS hour, grouping(route) = 0 AS by_route, route,
       toStartOfMinute(queued_at) AS minute,
       count() AS attempts,
       countIf(connection_reused = false) AS new_connections,
       countIf(connection_reused IS NOT NULL) AS connection_known,
       countIf(attempt > 1) AS retries,
       countIf(is_final_attempt AND status != 'error') AS successes,
       quantileExactInclusiveIf(0.95)(t_first_token_ms, status != 'error') AS t_first_token_p95,
       stddevSampIf(t_first_token_ms, status != 'error') AS t_first_token_stddev,
       quantileExactInclusiveIf(0.95)(ttft_ms, status != 'error') AS ttft_p95,
       stddevSampIf(ttft_ms, status != 'error') AS ttft_stddev,
       any(version)
FROM
(
    SELECT r.*, v.computed_at AS version
    FROM request_buckets AS r
    INNER JOIN
    (
        SELECT project_id, hour, max(computed_at) AS computed_at FROM aggregated_hours GROUP BY project_id, hour
    ) AS v ON v.project_id = r.project_id AND v.hour = toDateTime(toStartOfHour(r.queued_at), 'UTC')
    WHERE (r.project_id, toStartOfHour(r.queued_at), r.computed_at) IN (
              SELECT project_id, hour, max(computed_at) FROM materialized_hours GROUP BY project_id, hour)
)
GROUP BY GROUPING SETS ((project_id, service, minute), (project_id, service, route, minute))
