-- The sketch columns of bucket_minutes (store migration 0014) from request_buckets rows, in its column order:
-- attempts, errors, per bucket its DDSketch state, sum and count of known values, then ttft and total over
-- successful attempts. Used in a SELECT ... GROUP BY by the refresh and by reads of a window's edges.
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
quantilesDDState(0.002, 0.5, 0.95, 0.99)(if(status != 'error', total_ms, NULL)) AS total_ok_dd, countIf(total_ms IS NOT NULL AND status != 'error') AS total_ok_count
