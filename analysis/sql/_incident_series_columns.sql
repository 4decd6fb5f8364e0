-- The columns of one minute of an incident series (incident_series.sql, incident_series_slices.sql): attempts,
-- errors, and p50/p95 (exact) with the count of known values of every bucket (analysis.buckets.ALL).
-- NULL is not measured: not counted.
count() AS attempts,
countIf(status = 'error') AS errors,
quantilesExactInclusive(0.5, 0.95)(t_queue_ms) AS t_queue_q, count(t_queue_ms) AS t_queue_count,
quantilesExactInclusive(0.5, 0.95)(t_conn_ms) AS t_conn_q, count(t_conn_ms) AS t_conn_count,
quantilesExactInclusive(0.5, 0.95)(t_first_token_ms) AS t_first_token_q, count(t_first_token_ms) AS t_first_token_count,
quantilesExactInclusive(0.5, 0.95)(t_stream_ms) AS t_stream_q, count(t_stream_ms) AS t_stream_count,
quantilesExactInclusive(0.5, 0.95)(t_post_ms) AS t_post_q, count(t_post_ms) AS t_post_count,
quantilesExactInclusive(0.5, 0.95)(t_retry_ms) AS t_retry_q, count(t_retry_ms) AS t_retry_count,
quantilesExactInclusive(0.5, 0.95)(ttft_ms) AS ttft_q, count(ttft_ms) AS ttft_count,
quantilesExactInclusive(0.5, 0.95)(total_ms) AS total_q, count(total_ms) AS total_count
