-- Per-request shares over successful attempts (status != 'error'): medians of bucket / total_ms
-- (t_retry: t_retry / (t_retry + total) on final attempts), of stage sums / t_first_token_ms
-- (prep = tokenize + prompt_build + policy; a missing stage counts 0 but *_n says whether any
-- was seen), and the decode cost t_stream_ms / (output_tokens - 1) for output_tokens > 1.
-- quantileExactInclusive: exact, linear interpolation between closest ranks.
SELECT
    countIf(total_ms > 0) AS shared,
    quantileExactInclusiveIf(0.5)(t_queue_ms / total_ms, total_ms > 0) AS t_queue_share,
    quantileExactInclusiveIf(0.5)(t_conn_ms / total_ms, total_ms > 0) AS t_conn_share,
    quantileExactInclusiveIf(0.5)(t_first_token_ms / total_ms, total_ms > 0) AS t_first_token_share,
    quantileExactInclusiveIf(0.5)(t_stream_ms / total_ms, total_ms > 0) AS t_stream_share,
    quantileExactInclusiveIf(0.5)(t_post_ms / total_ms, total_ms > 0) AS t_post_share,
    quantileExactInclusiveIf(0.5)(t_retry_ms / (t_retry_ms + total_ms), t_retry_ms + total_ms > 0) AS t_retry_share,
    countIf(t_first_token_ms > 0) AS first_token_n,
    countIf(prep_ms IS NOT NULL) AS prep_n,
    quantileExactInclusiveIf(0.5)(coalesce(prep_ms, 0) / t_first_token_ms, t_first_token_ms > 0) AS prep_share,
    countIf(network_ms IS NOT NULL) AS network_n,
    quantileExactInclusiveIf(0.5)(coalesce(network_ms, 0) / t_first_token_ms, t_first_token_ms > 0) AS network_share,
    countIf(retrieval_ms IS NOT NULL) AS retrieval_n,
    quantilesExactInclusive(0.5, 0.95)(retrieval_ms) AS retrieval_q,
    countIf(tool_ms IS NOT NULL) AS tool_n,
    quantilesExactInclusive(0.5, 0.95)(tool_ms) AS tool_q,
    countIf(post_stage_ms IS NOT NULL) AS post_stage_n,
    quantileExactInclusiveIf(0.5)(coalesce(post_stage_ms, 0) / t_post_ms, t_post_ms > 0) AS post_stage_share,
    countIf(output_tokens > 1 AND t_stream_ms IS NOT NULL) AS decode_n,
    quantilesExactInclusiveIf(0.5, 0.95)(t_stream_ms / (output_tokens - 1), output_tokens > 1) AS ms_per_output_token_q
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
  AND status != 'error'
