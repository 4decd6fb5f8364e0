-- The columns of retry_hours (store migration 0029) after its keys, from request_buckets rows: retry_summary.sql's
-- counts (runs are final attempts), and failed attempts per retry cause as (causes, counts).
countIf(is_final_attempt) AS runs,
countIf(is_final_attempt AND t_retry_ms IS NOT NULL) AS known_runs,
countIf(is_final_attempt AND status != 'error') AS successful_runs,
countIf(is_final_attempt AND t_retry_ms IS NOT NULL AND run_attempt_count > 1) AS runs_with_retries,
sumIf(toInt64(run_attempt_count) - 1, is_final_attempt AND t_retry_ms IS NOT NULL) AS extra_attempts,
count() AS attempts,
countIf(status = 'error') AS failed_attempts,
sumIf(toUInt64(coalesce(input_tokens, 0)), status = 'error') AS wasted_input_tokens,
sumIf(toUInt64(coalesce(output_tokens, 0)), status = 'error') AS wasted_output_tokens,
sumMapIf([toString(retry_cause)], [toUInt64(1)], status = 'error') AS causes
