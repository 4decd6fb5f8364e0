-- Additive sums for the decomposition of a latency increase (analysis/incidents/causes.py): the attempts queued in
-- [start, end), the final attempts (runs), the sum in ms of every bucket's known values (t_retry: final attempts),
-- of the first-token stage sums (prep = tokenize + prompt_build + policy, network), and the attempts on a new
-- connection (connection_reused = false) and on a reused one with their t_first_token sums and counts; for decode
-- speed, the t_stream_ms sum and the (output_tokens - 1) sum of the attempts with more than one output token.
SELECT
    count() AS attempts,
    countIf(is_final_attempt) AS runs,
    sum(coalesce(t_queue_ms, 0)) AS t_queue_sum,
    sum(coalesce(t_conn_ms, 0)) AS t_conn_sum,
    sum(coalesce(t_first_token_ms, 0)) AS t_first_token_sum,
    sum(coalesce(t_stream_ms, 0)) AS t_stream_sum,
    sum(coalesce(t_post_ms, 0)) AS t_post_sum,
    sumIf(coalesce(t_retry_ms, 0), is_final_attempt) AS t_retry_sum,
    sum(coalesce(prep_ms, 0)) AS prep_sum,
    sum(coalesce(network_ms, 0)) AS network_sum,
    countIf(connection_reused = false AND t_first_token_ms IS NOT NULL) AS new_first_token_n,
    sumIf(coalesce(t_first_token_ms, 0), connection_reused = false) AS new_first_token_sum,
    countIf(connection_reused = true AND t_first_token_ms IS NOT NULL) AS reused_first_token_n,
    sumIf(coalesce(t_first_token_ms, 0), connection_reused = true) AS reused_first_token_sum,
    sumIf(t_stream_ms, output_tokens > 1 AND t_stream_ms IS NOT NULL) AS decode_stream_sum,
    sumIf(output_tokens - 1, output_tokens > 1 AND t_stream_ms IS NOT NULL) AS decode_tokens_sum
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
