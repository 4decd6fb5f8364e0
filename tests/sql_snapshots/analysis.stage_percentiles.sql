-- The {level} quantile (quantileExactInclusive: exact, linear interpolation between closest ranks) of
-- total and of every stage a budget can target (budgets/stages.py; aliases <code>_q), with the count of requests that
-- have a value for it (<code>_n), over one service's attempts queued in [start, end). NULLs are skipped.
SELECT
    count() AS requests,
    quantileExactInclusive({level:Float64})(total_ms) AS total_q, count(total_ms) AS total_n,
    quantileExactInclusive({level:Float64})(network_ms) AS network_q, count(network_ms) AS network_n,
    quantileExactInclusive({level:Float64})(retrieval_ms) AS retrieval_q, count(retrieval_ms) AS retrieval_n,
    quantileExactInclusive({level:Float64})(prep_ms) AS prompt_build_policy_q, count(prep_ms) AS prompt_build_policy_n,
    quantileExactInclusive({level:Float64})(t_first_token_ms + t_stream_ms) AS model_q, count(t_first_token_ms + t_stream_ms) AS model_n,
    quantileExactInclusive({level:Float64})(tool_ms) AS tools_q, count(tool_ms) AS tools_n,
    quantileExactInclusive({level:Float64})(post_stage_ms) AS post_q, count(post_stage_ms) AS post_n,
    quantileExactInclusive({level:Float64})(tools_post) AS tools_post_q, count(tools_post) AS tools_post_n,
    quantileExactInclusive({level:Float64})(t_queue_ms) AS queue_q, count(t_queue_ms) AS queue_n,
    quantileExactInclusive({level:Float64})(t_conn_ms) AS connection_q, count(t_conn_ms) AS connection_n,
    quantileExactInclusive({level:Float64})(t_first_token_ms) AS first_token_q, count(t_first_token_ms) AS first_token_n,
    quantileExactInclusive({level:Float64})(t_stream_ms) AS stream_q, count(t_stream_ms) AS stream_n,
    quantileExactInclusive({level:Float64})(t_post_ms) AS post_bucket_q, count(t_post_ms) AS post_bucket_n,
    quantileExactInclusive({level:Float64})(t_retry_ms) AS retry_q, count(t_retry_ms) AS retry_n,
    quantileExactInclusive({level:Float64})(ttft_ms) AS ttft_q, count(ttft_ms) AS ttft_n
FROM
(
    SELECT *, if(tool_ms IS NULL AND post_stage_ms IS NULL, NULL, coalesce(tool_ms, 0) + coalesce(post_stage_ms, 0)) AS tools_post
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String}
      AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
      AND ({route:String} = '' OR route = {route:String})
)
