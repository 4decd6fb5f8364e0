-- Measurement coverage of one service's attempts queued in [start, end), per span form: how many attempts,
-- runs (final attempts) and successful attempts there are, and how many of them have each bucket and signal
-- measured (a known value: NULL means the spans could not give it). Each hour's current rows. The window's aggregated
-- core sums coverage_hours, its edges count request_buckets (analysis/rollups/aggregates.py): the same counts either way.
-- A tenant filter counts every attempt (core_start = core_end = end).
-- The denominators analysis/reads/coverage.py uses: attempts; successes for what needs a first token (a failed
-- attempt may end before one); runs for t_retry.
SELECT
    form,
    sum(s.attempts) AS attempts,
    sum(s.runs) AS runs,
    sum(s.successes) AS successes,
    sum(s.t_queue) AS t_queue,
    sum(s.t_conn) AS t_conn,
    sum(s.t_first_token) AS t_first_token,
    sum(s.t_stream) AS t_stream,
    sum(s.t_post) AS t_post,
    sum(s.t_retry) AS t_retry,
    sum(s.ttft) AS ttft,
    sum(s.total) AS total,
    sum(s.connections) AS connections,
    sum(s.cap) AS cap,
    sum(s.tokens) AS tokens,
    sum(s.stages) AS stages
FROM
(
    SELECT form, attempts, runs, successes, t_queue, t_conn, t_first_token, t_stream, t_post, t_retry, ttft, total, connections, cap, tokens, stages
    FROM coverage_hours
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND {{core_version}}
      AND ({route:String} = '' OR route = {route:String})
    UNION ALL
    SELECT form,
    {{coverage_columns}}
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String} AND {{edges}} AND {{filters}}
    GROUP BY form
) AS s
GROUP BY form
ORDER BY attempts DESC, form
