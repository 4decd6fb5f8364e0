-- request_shares.sql for a long window: its aggregated core's per-hour states (share_hours) merged with its edges'
-- states from request_buckets (analysis/rollups/aggregates.py). Medians and quantiles within the sketch's 0.2 % of a value
-- near the rank; counts exact.
SELECT
    sum(shared) AS shared,
    quantilesDDMerge(0.002, 0.5)(t_queue_share)[1] AS t_queue_share,
    quantilesDDMerge(0.002, 0.5)(t_conn_share)[1] AS t_conn_share,
    quantilesDDMerge(0.002, 0.5)(t_first_token_share)[1] AS t_first_token_share,
    quantilesDDMerge(0.002, 0.5)(t_stream_share)[1] AS t_stream_share,
    quantilesDDMerge(0.002, 0.5)(t_post_share)[1] AS t_post_share,
    quantilesDDMerge(0.002, 0.5)(t_retry_share)[1] AS t_retry_share,
    sum(first_token_n) AS first_token_n,
    sum(prep_n) AS prep_n,
    quantilesDDMerge(0.002, 0.5)(prep_share)[1] AS prep_share,
    sum(network_n) AS network_n,
    quantilesDDMerge(0.002, 0.5)(network_share)[1] AS network_share,
    sum(retrieval_n) AS retrieval_n,
    quantilesDDMerge(0.002, 0.5, 0.95)(retrieval_q) AS retrieval_q,
    sum(tool_n) AS tool_n,
    quantilesDDMerge(0.002, 0.5, 0.95)(tool_q) AS tool_q,
    sum(post_stage_n) AS post_stage_n,
    quantilesDDMerge(0.002, 0.5)(post_stage_share)[1] AS post_stage_share,
    sum(decode_n) AS decode_n,
    quantilesDDMerge(0.002, 0.5, 0.95)(ms_per_output_token_q) AS ms_per_output_token_q
FROM
(
    SELECT * EXCEPT (project_id, service, hour, route, computed_at)
    FROM share_hours
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
  AND (hour, computed_at) IN (
      SELECT hour, max(computed_at) FROM aggregated_hours
      WHERE project_id = {project_id:UInt32} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
      GROUP BY hour)
      AND ({route:String} = '' OR route = {route:String})
    UNION ALL
    SELECT countIf(total_ms > 0) AS shared,
quantilesDDStateIf(0.002, 0.5)(t_queue_ms / total_ms, total_ms > 0) AS t_queue_share,
quantilesDDStateIf(0.002, 0.5)(t_conn_ms / total_ms, total_ms > 0) AS t_conn_share,
quantilesDDStateIf(0.002, 0.5)(t_first_token_ms / total_ms, total_ms > 0) AS t_first_token_share,
quantilesDDStateIf(0.002, 0.5)(t_stream_ms / total_ms, total_ms > 0) AS t_stream_share,
quantilesDDStateIf(0.002, 0.5)(t_post_ms / total_ms, total_ms > 0) AS t_post_share,
quantilesDDStateIf(0.002, 0.5)(t_retry_ms / (t_retry_ms + total_ms), t_retry_ms + total_ms > 0) AS t_retry_share,
countIf(t_first_token_ms > 0) AS first_token_n,
countIf(prep_ms IS NOT NULL) AS prep_n,
quantilesDDStateIf(0.002, 0.5)(coalesce(prep_ms, 0) / t_first_token_ms, t_first_token_ms > 0) AS prep_share,
countIf(network_ms IS NOT NULL) AS network_n,
quantilesDDStateIf(0.002, 0.5)(coalesce(network_ms, 0) / t_first_token_ms, t_first_token_ms > 0) AS network_share,
countIf(retrieval_ms IS NOT NULL) AS retrieval_n,
quantilesDDState(0.002, 0.5, 0.95)(retrieval_ms) AS retrieval_q,
countIf(tool_ms IS NOT NULL) AS tool_n,
quantilesDDState(0.002, 0.5, 0.95)(tool_ms) AS tool_q,
countIf(post_stage_ms IS NOT NULL) AS post_stage_n,
quantilesDDStateIf(0.002, 0.5)(coalesce(post_stage_ms, 0) / t_post_ms, t_post_ms > 0) AS post_stage_share,
countIf(output_tokens > 1 AND t_stream_ms IS NOT NULL) AS decode_n,
quantilesDDStateIf(0.002, 0.5, 0.95)(t_stream_ms / (output_tokens - 1), output_tokens > 1) AS ms_per_output_token_q
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String} AND ((start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {core_start:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {core_start:DateTime64(9, 'UTC')})
 OR (start_at >= {core_end:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {core_end:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}))
      AND ({route:String} = '' OR route = {route:String})
      AND status != 'error'
)
