-- churn_windows.sql's columns of one minute of request_buckets rows, after `minute` (toStartOfMinute(queued_at)):
-- attempts, new connections (connection_reused = false) and attempts that say whether they reused one, retries
-- (attempt > 1), successful runs (final attempt not 'error'), and over successful attempts p95
-- (quantileExactInclusive) and sample stddev of t_first_token_ms and ttft_ms (NaN for fewer than 2 values).
count() AS attempts,
countIf(connection_reused = false) AS new_connections,
countIf(connection_reused IS NOT NULL) AS connection_known,
countIf(attempt > 1) AS retries,
countIf(is_final_attempt AND status != 'error') AS successes,
quantileExactInclusiveIf(0.95)(t_first_token_ms, status != 'error') AS t_first_token_p95,
stddevSampIf(t_first_token_ms, status != 'error') AS t_first_token_stddev,
quantileExactInclusiveIf(0.95)(ttft_ms, status != 'error') AS ttft_p95,
stddevSampIf(ttft_ms, status != 'error') AS ttft_stddev
