-- bucket_distribution.sql per prompt-length segment (_segment.sql, cut at {edges}).
SELECT
    if(input_tokens IS NULL, -1, toInt32(arrayCount(e -> assumeNotNull(input_tokens) >= e, {edges:Array(UInt32)}))) AS segment,
    count() AS requests,
    quantilesExactInclusive(0.5, 0.95, 0.99)(t_queue_ms) AS t_queue_q, avg(t_queue_ms) AS t_queue_mean, count(t_queue_ms) AS t_queue_count,
    quantilesExactInclusive(0.5, 0.95, 0.99)(t_conn_ms) AS t_conn_q, avg(t_conn_ms) AS t_conn_mean, count(t_conn_ms) AS t_conn_count,
    quantilesExactInclusive(0.5, 0.95, 0.99)(t_first_token_ms) AS t_first_token_q, avg(t_first_token_ms) AS t_first_token_mean, count(t_first_token_ms) AS t_first_token_count,
    quantilesExactInclusive(0.5, 0.95, 0.99)(t_stream_ms) AS t_stream_q, avg(t_stream_ms) AS t_stream_mean, count(t_stream_ms) AS t_stream_count,
    quantilesExactInclusive(0.5, 0.95, 0.99)(t_post_ms) AS t_post_q, avg(t_post_ms) AS t_post_mean, count(t_post_ms) AS t_post_count,
    quantilesExactInclusive(0.5, 0.95, 0.99)(t_retry_ms) AS t_retry_q, avg(t_retry_ms) AS t_retry_mean, count(t_retry_ms) AS t_retry_count,
    quantilesExactInclusive(0.5, 0.95, 0.99)(ttft_ms) AS ttft_q, avg(ttft_ms) AS ttft_mean, count(ttft_ms) AS ttft_count,
    quantilesExactInclusive(0.5, 0.95, 0.99)(total_ms) AS total_q, avg(total_ms) AS total_mean, count(total_ms) AS total_count
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
GROUP BY segment
ORDER BY segment
