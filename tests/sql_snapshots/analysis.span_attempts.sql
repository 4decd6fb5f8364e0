-- The attempts (request_buckets rows) of given span ids in given traces, started in [start, end): the engine
-- attempts under a run's calls (another service, in the run's traces), with the instants the waterfall draws.
SELECT
    service, run_id, trace_id, span_id, attempt, status, retry_cause, tenant, route, model, instance,
    connection_reused, input_tokens, output_tokens, is_final_attempt, run_attempt_count,
    toUnixTimestamp64Nano(start_at) AS start_ns, toUnixTimestamp64Nano(queued_at) AS queued_ns,
    toUnixTimestamp64Nano(admitted_at) AS admitted_ns, toUnixTimestamp64Nano(first_token_at) AS first_token_ns,
    toUnixTimestamp64Nano(last_token_at) AS last_token_ns, toUnixTimestamp64Nano(released_at) AS released_ns,
    t_queue_ms, t_conn_ms, t_first_token_ms, t_stream_ms, t_post_ms, t_retry_ms, ttft_ms, total_ms
FROM request_buckets
PREWHERE trace_id IN {trace_ids:Array(String)}
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND span_id IN {span_ids:Array(String)}
  AND start_at >= {start:DateTime64(9, 'UTC')} AND start_at < {end:DateTime64(9, 'UTC')}
ORDER BY start_at
LIMIT 1000
