-- Per-minute sketches of every service and route of one project over the whole hours [start, end), from
-- request_buckets, as version {computed_at} of those hours' rows (store migration 0014).
INSERT INTO bucket_minutes
SELECT project_id, service, toStartOfHour(queued_at) AS hour, route, toStartOfMinute(queued_at) AS minute,
       count() AS attempts, countIf(status = 'error') AS errors,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_queue_ms) AS t_queue_dd, sum(t_queue_ms) AS t_queue_sum, count(t_queue_ms) AS t_queue_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_conn_ms) AS t_conn_dd, sum(t_conn_ms) AS t_conn_sum, count(t_conn_ms) AS t_conn_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_first_token_ms) AS t_first_token_dd, sum(t_first_token_ms) AS t_first_token_sum, count(t_first_token_ms) AS t_first_token_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_stream_ms) AS t_stream_dd, sum(t_stream_ms) AS t_stream_sum, count(t_stream_ms) AS t_stream_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_post_ms) AS t_post_dd, sum(t_post_ms) AS t_post_sum, count(t_post_ms) AS t_post_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_retry_ms) AS t_retry_dd, sum(t_retry_ms) AS t_retry_sum, count(t_retry_ms) AS t_retry_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(ttft_ms) AS ttft_dd, sum(ttft_ms) AS ttft_sum, count(ttft_ms) AS ttft_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(total_ms) AS total_dd, sum(total_ms) AS total_sum, count(total_ms) AS total_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(if(status != 'error', ttft_ms, NULL)) AS ttft_ok_dd, countIf(ttft_ms IS NOT NULL AND status != 'error') AS ttft_ok_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(if(status != 'error', total_ms, NULL)) AS total_ok_dd, countIf(total_ms IS NOT NULL AND status != 'error') AS total_ok_count,
       {computed_at:DateTime64(3, 'UTC')}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour)
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
  AND service IN (
    SELECT service FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
    GROUP BY service ORDER BY count() DESC, service LIMIT 1000)
GROUP BY project_id, service, hour, route, minute
