-- Per minute of queued_at over one service's attempts queued in [start, end) (one route / tenant / instance, '' = all):
-- the per-minute series incident detection judges (analysis/incidents/), as _incident_series_columns.sql.
SELECT
    toStartOfMinute(queued_at) AS minute,
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
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String}) AND ({instance:String} = '' OR instance = {instance:String})
GROUP BY minute
ORDER BY minute
