-- Per-hour sketches of every service and route of one project over the whole hours [start, end), merged from the
-- bucket_minutes rows of version {computed_at} just written (cheaper than sketching request_buckets again), as
-- the same version of those hours' rows (store migration 0016).
INSERT INTO bucket_hours
SELECT project_id, service, hour, route, sum(attempts), sum(errors),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(t_queue_dd), sum(t_queue_sum), sum(t_queue_count),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(t_conn_dd), sum(t_conn_sum), sum(t_conn_count),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(t_first_token_dd), sum(t_first_token_sum), sum(t_first_token_count),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(t_stream_dd), sum(t_stream_sum), sum(t_stream_count),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(t_post_dd), sum(t_post_sum), sum(t_post_count),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(t_retry_dd), sum(t_retry_sum), sum(t_retry_count),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(ttft_dd), sum(ttft_sum), sum(ttft_count),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(total_dd), sum(total_sum), sum(total_count),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(ttft_ok_dd), sum(ttft_ok_count), quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(total_ok_dd), sum(total_ok_count),
       {computed_at:DateTime64(3, 'UTC')}
FROM bucket_minutes
WHERE project_id = {project_id:UInt32} AND hour >= {start:DateTime64(9, 'UTC')} AND hour < {end:DateTime64(9, 'UTC')}
  AND computed_at = {computed_at:DateTime64(3, 'UTC')}
GROUP BY project_id, service, hour, route
