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
    SELECT project_id, service, {{incident_slice_rows}}
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND {{current}} AND {{window}}
    GROUP BY GROUPING SETS ((project_id, service, minute), (project_id, service, route, minute),
                            (project_id, service, tenant, minute), (project_id, service, instance, minute))
)
WHERE dimension = '' OR value != ''
