-- share_hours of the hours aggregated before 0021, at each hour's current aggregate version (aggregated_hours), so
-- that a window read from sketches finds the shares of each of its aggregated hours. The states as
-- analysis/sql/_share_states.sql writes them, over each hour's current request_buckets rows (materialized_hours).
INSERT INTO share_hours
SELECT project_id, service, hour, route,
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
       any(version)
FROM
(
    SELECT r.*, toDateTime(toStartOfHour(r.queued_at), 'UTC') AS hour, v.computed_at AS version
    FROM request_buckets AS r
    INNER JOIN
    (
        SELECT project_id, hour, max(computed_at) AS computed_at FROM aggregated_hours GROUP BY project_id, hour
    ) AS v ON v.project_id = r.project_id AND v.hour = toDateTime(toStartOfHour(r.queued_at), 'UTC')
    WHERE (r.project_id, toStartOfHour(r.queued_at), r.computed_at) IN (
              SELECT project_id, hour, max(computed_at) FROM materialized_hours GROUP BY project_id, hour)
      AND r.status != 'error'
)
GROUP BY project_id, service, hour, route
