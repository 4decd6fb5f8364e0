-- Additive sums across layers for the decomposition of a gateway's latency increase (analysis/incidents/causes.py),
-- per engine service its calls queued in [start, end) reached (layer_links): the calls seen at two layers, the sums
-- in ms of t_gateway and t_network_total (the time between the layers), the sums of the calls' own buckets (taken
-- out of the gateway's stage_sums: the layers split them), and the engine attempts' stage_sums columns (as
-- stage_sums.sql). An unknown value adds nothing. No row for a gateway without calls seen at two layers.
WITH
links AS
(
    -- one row per call and engine attempt
    SELECT engine_service, trace_id, call_span_id, engine_span_id, t_gateway_ms, t_network_total_ms
    FROM layer_links FINAL
    WHERE project_id = {project_id:UInt32} AND gateway_service = {service:String}
      AND call_start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
      AND call_start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
      AND call_queued_at >= {start:DateTime64(9, 'UTC')} AND call_queued_at < {end:DateTime64(9, 'UTC')}
),
calls AS
(
    -- the gateway's calls among them, with their own buckets
    SELECT trace_id, span_id, t_queue_ms, t_conn_ms, t_first_token_ms, t_stream_ms, t_post_ms, prep_ms, network_ms
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String} AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
      AND (trace_id, span_id) IN (SELECT trace_id, call_span_id FROM links)
),
engines AS
(
    -- the engine attempts under them, with their buckets
    SELECT trace_id, span_id, t_queue_ms, t_conn_ms, t_first_token_ms, t_stream_ms, t_post_ms, prep_ms, network_ms,
           t_retry_ms, is_final_attempt, connection_reused, output_tokens
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour)
      AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 2 HOUR
      AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 2 HOUR
      AND (trace_id, span_id) IN (SELECT trace_id, engine_span_id FROM links)
)
SELECT
    l.engine_service AS engine_service,
    count() AS links,
    sum(coalesce(l.t_gateway_ms, 0)) AS t_gateway_sum,
    sum(coalesce(l.t_network_total_ms, 0)) AS t_network_total_sum,
    sum(coalesce(c.t_queue_ms, 0)) AS call_t_queue_sum,
    sum(coalesce(c.t_conn_ms, 0)) AS call_t_conn_sum,
    sum(coalesce(c.t_first_token_ms, 0)) AS call_t_first_token_sum,
    sum(coalesce(c.t_stream_ms, 0)) AS call_t_stream_sum,
    sum(coalesce(c.t_post_ms, 0)) AS call_t_post_sum,
    sum(coalesce(c.prep_ms, 0)) AS call_prep_sum,
    sum(coalesce(c.network_ms, 0)) AS call_network_sum,
    sum(coalesce(e.t_queue_ms, 0)) AS t_queue_sum,
    sum(coalesce(e.t_conn_ms, 0)) AS t_conn_sum,
    sum(coalesce(e.t_first_token_ms, 0)) AS t_first_token_sum,
    sum(coalesce(e.t_stream_ms, 0)) AS t_stream_sum,
    sum(coalesce(e.t_post_ms, 0)) AS t_post_sum,
    sumIf(coalesce(e.t_retry_ms, 0), e.is_final_attempt) AS t_retry_sum,
    sum(coalesce(e.prep_ms, 0)) AS prep_sum,
    sum(coalesce(e.network_ms, 0)) AS network_sum,
    countIf(e.connection_reused = false AND e.t_first_token_ms IS NOT NULL) AS new_first_token_n,
    sumIf(coalesce(e.t_first_token_ms, 0), e.connection_reused = false) AS new_first_token_sum,
    countIf(e.connection_reused = true AND e.t_first_token_ms IS NOT NULL) AS reused_first_token_n,
    sumIf(coalesce(e.t_first_token_ms, 0), e.connection_reused = true) AS reused_first_token_sum,
    sumIf(e.t_stream_ms, e.output_tokens > 1 AND e.t_stream_ms IS NOT NULL) AS decode_stream_sum,
    sumIf(e.output_tokens - 1, e.output_tokens > 1 AND e.t_stream_ms IS NOT NULL) AS decode_tokens_sum
FROM links AS l
LEFT JOIN calls AS c ON c.trace_id = l.trace_id AND c.span_id = l.call_span_id
LEFT JOIN engines AS e ON e.trace_id = l.trace_id AND e.span_id = l.engine_span_id
GROUP BY engine_service
ORDER BY links DESC, engine_service
SETTINGS join_use_nulls = 1
