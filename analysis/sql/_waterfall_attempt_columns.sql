-- An attempt's columns as the run waterfall draws it (dashboard/waterfall.py): ids, status, tenant, route, model,
-- instance, tokens, its instants as epoch nanoseconds and its buckets in ms. run_attempts.sql, span_attempts.sql.
    service, run_id, trace_id, span_id, attempt, status, retry_cause, tenant, route, model, instance,
    connection_reused, input_tokens, output_tokens, is_final_attempt, run_attempt_count,
    toUnixTimestamp64Nano(start_at) AS start_ns, toUnixTimestamp64Nano(queued_at) AS queued_ns,
    toUnixTimestamp64Nano(admitted_at) AS admitted_ns, toUnixTimestamp64Nano(first_token_at) AS first_token_ns,
    toUnixTimestamp64Nano(last_token_at) AS last_token_ns, toUnixTimestamp64Nano(released_at) AS released_ns,
    t_queue_ms, t_conn_ms, t_first_token_ms, t_stream_ms, t_post_ms, t_retry_ms, ttft_ms, total_ms
