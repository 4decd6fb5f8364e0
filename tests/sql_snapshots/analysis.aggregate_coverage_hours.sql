-- Measurement coverage per service, hour, route and span form of one project over the whole hours [start, end),
-- from request_buckets, as version {computed_at} of those hours' rows (store migration 0015).
INSERT INTO coverage_hours
SELECT project_id, service, toStartOfHour(queued_at) AS hour, route, form,
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
    countIf(prep_ms IS NOT NULL OR network_ms IS NOT NULL OR post_stage_ms IS NOT NULL) AS stages,
    {computed_at:DateTime64(3, 'UTC')}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour)
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
GROUP BY project_id, service, hour, route, form
