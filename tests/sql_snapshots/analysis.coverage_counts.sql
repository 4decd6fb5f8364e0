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
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
  AND (hour, computed_at) IN (
      SELECT hour, max(computed_at) FROM aggregated_hours
      WHERE project_id = {project_id:UInt32} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
      GROUP BY hour)
      AND ({route:String} = '' OR route = {route:String})
    UNION ALL
    SELECT form,
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
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String} AND ((start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {core_start:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {core_start:DateTime64(9, 'UTC')})
 OR (start_at >= {core_end:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {core_end:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')})) AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
    GROUP BY form
) AS s
GROUP BY form
ORDER BY attempts DESC, form
