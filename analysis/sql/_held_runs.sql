-- runs (named by llm.run.id or litellm.call_id) with a failed try whose last-ended attempt started with the run:
-- it holds the other tries. LiteLLM's v1 span of a call that succeeded on a retry starts with the call, 3 ms before
-- its failed try, and holds the back-off and the retry: taken for the latest-started, the failed try was final
-- (a failed run) with a t_retry of 3 ms. The holder is final, its t_retry 0 (it starts with the run) and its total
-- the whole call, back-off included: when the retry itself started is in none of the spans.
SELECT service AS h_service, run_id AS h_run_id, argMax(span_id, end_at) AS h_span_id
FROM spans FINAL
WHERE project_id = {project_id:UInt32} AND role = 'attempt'
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 2 HOUR
  AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND run_id IN (
      SELECT run_id FROM spans
      WHERE project_id = {project_id:UInt32} AND role = 'attempt' AND status = 'error' AND run_id != trace_id
        AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
        AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR)
GROUP BY service, run_id
HAVING count() > 1 AND argMax(start_at, end_at) = min(start_at)
