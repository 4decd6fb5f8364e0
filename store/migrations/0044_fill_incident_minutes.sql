-- incident_minutes of the hours aggregated before 0043, at each hour's current aggregate version (aggregated_hours).
-- The columns as analysis/sql/aggregate_incident_minutes.sql writes them, over each hour's current request_buckets
-- rows (materialized_hours).
INSERT INTO incident_minutes
SELECT project_id, service, toStartOfHour(minute) AS hour, dimension, value, minute, attempts, errors,
       t_queue_q, t_queue_count, t_conn_q, t_conn_count, t_first_token_q, t_first_token_count,
       t_stream_q, t_stream_count, t_post_q, t_post_count, t_retry_q, t_retry_count,
       ttft_q, ttft_count, total_q, total_count, version
FROM
(
    SELECT project_id, service, toStartOfMinute(queued_at) AS minute,
           multiIf(grouping(route) = 0, 'route', grouping(tenant) = 0, 'tenant', grouping(instance) = 0, 'instance', '')
               AS dimension,
           multiIf(dimension = 'route', route, dimension = 'tenant', tenant, dimension = 'instance', instance, '')
               AS value,
           count() AS attempts,
           countIf(status = 'error') AS errors,
           quantilesExactInclusive(0.5, 0.95)(t_queue_ms) AS t_queue_q, count(t_queue_ms) AS t_queue_count,
           quantilesExactInclusive(0.5, 0.95)(t_conn_ms) AS t_conn_q, count(t_conn_ms) AS t_conn_count,
           quantilesExactInclusive(0.5, 0.95)(t_first_token_ms) AS t_first_token_q,
           count(t_first_token_ms) AS t_first_token_count,
           quantilesExactInclusive(0.5, 0.95)(t_stream_ms) AS t_stream_q, count(t_stream_ms) AS t_stream_count,
           quantilesExactInclusive(0.5, 0.95)(t_post_ms) AS t_post_q, count(t_post_ms) AS t_post_count,
           quantilesExactInclusive(0.5, 0.95)(t_retry_ms) AS t_retry_q, count(t_retry_ms) AS t_retry_count,
           quantilesExactInclusive(0.5, 0.95)(ttft_ms) AS ttft_q, count(ttft_ms) AS ttft_count,
           quantilesExactInclusive(0.5, 0.95)(total_ms) AS total_q, count(total_ms) AS total_count,
           any(version) AS version
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
    GROUP BY GROUPING SETS ((project_id, service, minute), (project_id, service, route, minute),
                            (project_id, service, tenant, minute), (project_id, service, instance, minute))
)
WHERE dimension = '' OR value != ''
