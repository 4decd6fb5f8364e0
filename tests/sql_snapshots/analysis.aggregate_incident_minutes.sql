-- incident_minutes of one project over the whole hours [start, end), from request_buckets, as version {computed_at}
-- of those hours' rows (store migration 0043): one pass, with the grouping sets of incident_series_slices.sql per
-- service.
INSERT INTO incident_minutes
SELECT project_id, service, toStartOfHour(minute) AS hour, dimension, value, minute, attempts, errors,
       t_queue_q, t_queue_count, t_conn_q, t_conn_count, t_first_token_q, t_first_token_count,
       t_stream_q, t_stream_count, t_post_q, t_post_count, t_retry_q, t_retry_count,
       ttft_q, ttft_count, total_q, total_count, {computed_at:DateTime64(3, 'UTC')}
FROM
(
    SELECT project_id, service, toStartOfMinute(queued_at) AS minute,
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
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
    GROUP BY GROUPING SETS ((project_id, service, minute), (project_id, service, route, minute),
                            (project_id, service, tenant, minute), (project_id, service, instance, minute))
)
WHERE dimension = '' OR value != ''
