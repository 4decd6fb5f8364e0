-- Per-request shares' sketches per service, hour and route of one project over the whole hours [start, end), from
-- successful request_buckets rows, as version {computed_at} of those hours' rows (store migration 0021).
INSERT INTO share_hours
SELECT project_id, service, toStartOfHour(queued_at) AS hour, route,
       countIf(total_ms > 0) AS shared,
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
quantilesDDStateIf(0.002, 0.5, 0.95)(t_stream_ms / (output_tokens - 1), output_tokens > 1) AS ms_per_output_token_q,
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
  AND status != 'error'
GROUP BY project_id, service, hour, route
