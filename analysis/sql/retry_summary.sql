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
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND {{core_version}}
      AND ({route:String} = '' OR route = {route:String})
    UNION ALL
    SELECT {{retry_counts}}
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String} AND {{edges}} AND {{filters}}
) AS s
