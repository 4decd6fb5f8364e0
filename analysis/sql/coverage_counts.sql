-- Measurement coverage of one service's attempts queued in [start, end), per span form: how many attempts,
-- runs (final attempts) and successful attempts there are, and how many of them have each bucket and signal
-- measured (a known value: NULL means the spans could not give it). Logical rows: FINAL.
-- The denominators analysis/coverage.py uses: attempts; successes for what needs a first token (a failed
-- attempt may end before one); runs for t_retry.
SELECT
    form,
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
FROM request_buckets FINAL
WHERE project_id = {project_id:UInt32} AND service = {service:String}
  AND {{window}} AND {{filters}}
GROUP BY form
ORDER BY attempts DESC, form
