-- What coverage_counts.sql counts per span form (attempts, runs, successes, then per bucket and signal the attempts
-- with a known value), from request_buckets rows: read by coverage_counts.sql for a window's edges and stored per
-- hour in coverage_hours (store migration 0015) for its aggregated core.
    count() AS attempts,
    countIf(is_final_attempt) AS runs,
    countIf(status != 'error') AS successes,
    countIf(t_queue_ms IS NOT NULL) AS t_queue,
    countIf(t_conn_ms IS NOT NULL) AS t_conn,
    countIf(status != 'error' AND t_first_token_ms IS NOT NULL) AS t_first_token,
    countIf(status != 'error' AND t_stream_ms IS NOT NULL) AS t_stream,
    countIf(status != 'error' AND t_post_ms IS NOT NULL) AS t_post,
    countIf(is_final_attempt AND t_retry_ms IS NOT NULL) AS t_retry,
    countIf(status != 'error' AND ttft_ms IS NOT NULL) AS ttft,
    countIf(total_ms IS NOT NULL) AS total,
    countIf(connection_reused IS NOT NULL) AS connections,
    countIf(cap IS NOT NULL) AS cap,
    countIf(status != 'error' AND input_tokens IS NOT NULL AND output_tokens IS NOT NULL) AS tokens,
    countIf(prep_ms IS NOT NULL OR network_ms IS NOT NULL OR post_stage_ms IS NOT NULL) AS stages
