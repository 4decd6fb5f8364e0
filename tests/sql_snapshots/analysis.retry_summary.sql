-- Retries of one service's runs whose final attempt was queued in [start, end) and of its attempts:
-- runs (final attempts), successful runs (final attempt not 'error'), runs with retries, the sum of
-- (attempts - 1) over runs, failed attempts, tokens they consumed (input) and produced (output,
-- where known), and failed attempts per retry cause ('' when the span named none).
-- Retries are counted over the runs whose attempts say they belong to one (t_retry known: llm.run.id,
-- llm.attempt or http.request.resend_count, see materialize_request_buckets.sql): known_runs.
-- The window's aggregated core adds retry_hours, its edges count request_buckets (analysis/rollups/aggregates.py): the same
-- counts either way. A tenant filter counts every attempt (core_start = core_end = end).
SELECT
    sum(s.runs) AS runs,
    sum(s.known_runs) AS known_runs,
    sum(s.successful_runs) AS successful_runs,
    sum(s.runs_with_retries) AS runs_with_retries,
    sum(s.extra_attempts) AS extra_attempts,
    sum(s.attempts) AS attempts,
    sum(s.failed_attempts) AS failed_attempts,
    sum(s.wasted_input_tokens) AS wasted_input_tokens,
    sum(s.wasted_output_tokens) AS wasted_output_tokens,
    sumMap(tupleElement(s.causes, 1), tupleElement(s.causes, 2)) AS causes
FROM
(
    SELECT runs, known_runs, successful_runs, runs_with_retries, extra_attempts, attempts, failed_attempts,
           wasted_input_tokens, wasted_output_tokens, causes
    FROM retry_hours
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
  AND (hour, computed_at) IN (
      SELECT hour, max(computed_at) FROM aggregated_hours
      WHERE project_id = {project_id:UInt32} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
      GROUP BY hour)
      AND ({route:String} = '' OR route = {route:String})
    UNION ALL
    SELECT countIf(is_final_attempt) AS runs,
countIf(is_final_attempt AND t_retry_ms IS NOT NULL) AS known_runs,
countIf(is_final_attempt AND status != 'error') AS successful_runs,
countIf(is_final_attempt AND t_retry_ms IS NOT NULL AND run_attempt_count > 1) AS runs_with_retries,
sumIf(toInt64(run_attempt_count) - 1, is_final_attempt AND t_retry_ms IS NOT NULL) AS extra_attempts,
count() AS attempts,
countIf(status = 'error') AS failed_attempts,
sumIf(toUInt64(coalesce(input_tokens, 0)), status = 'error') AS wasted_input_tokens,
sumIf(toUInt64(coalesce(output_tokens, 0)), status = 'error') AS wasted_output_tokens,
sumMapIf([toString(retry_cause)], [toUInt64(1)], status = 'error') AS causes
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String} AND ((start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {core_start:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {core_start:DateTime64(9, 'UTC')})
 OR (start_at >= {core_end:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {core_end:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')})) AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
) AS s
