-- Retries of one service's runs whose final attempt was queued in [start, end) and of its attempts:
-- runs (final attempts), successful runs (final attempt not 'error'), runs with retries, the sum of
-- (attempts - 1) over runs, failed attempts, tokens they consumed (input) and produced (output,
-- where known), and failed attempts per retry cause ('' when the span named none).
-- Retries are counted over the runs whose attempts say they belong to one (t_retry known: llm.run.id,
-- llm.attempt or http.request.resend_count, see materialize_request_buckets.sql): known_runs.
SELECT
    countIf(is_final_attempt) AS runs,
    countIf(is_final_attempt AND t_retry_ms IS NOT NULL) AS known_runs,
    countIf(is_final_attempt AND status != 'error') AS successful_runs,
    countIf(is_final_attempt AND t_retry_ms IS NOT NULL AND run_attempt_count > 1) AS runs_with_retries,
    sumIf(run_attempt_count - 1, is_final_attempt AND t_retry_ms IS NOT NULL) AS extra_attempts,
    count() AS attempts,
    countIf(status = 'error') AS failed_attempts,
    sumIf(coalesce(input_tokens, 0), status = 'error') AS wasted_input_tokens,
    sumIf(coalesce(output_tokens, 0), status = 'error') AS wasted_output_tokens,
    sumMapIf([toString(retry_cause)], [toUInt64(1)], status = 'error') AS causes
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String}
  AND {{window}} AND {{filters}}
