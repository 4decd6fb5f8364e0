-- Recompute the request_buckets rows of one project's attempts queued in [start, end): the attempts
-- view's buckets plus stage sums (ms) from stage spans under the attempt (the view's own_*_ms) and under the run's
-- root span (the attempt's parent: where retrieval and tool stages live). A stage kind with no span is NULL.
-- t_retry is NULL when the run is unknowable: the span names no llm.run.id, llm.attempt,
-- http.request.resend_count or litellm.call_id, so other attempts of its trace need not be tries of the same request.
-- A run held by one attempt (held_runs) has that attempt as its final one.
INSERT INTO request_buckets
WITH held_runs AS
(
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
),
stage_sums AS
(
    -- stage sums (ms) per parent span (here: the attempts' parents); NULL for a stage kind with no span
    SELECT trace_id AS s_trace_id, parent_span_id AS s_parent_span_id,
           if(countIf(stage IN ('tokenize', 'prompt_build', 'policy')) > 0, sumIf(duration_ms, stage IN ('tokenize', 'prompt_build', 'policy')), NULL) AS prep_ms,
           if(countIf(stage = 'network') > 0, sumIf(duration_ms, stage = 'network'), NULL) AS network_ms,
           if(countIf(stage = 'retrieval') > 0, sumIf(duration_ms, stage = 'retrieval'), NULL) AS retrieval_ms,
           if(countIf(stage = 'tool') > 0, sumIf(duration_ms, stage = 'tool'), NULL) AS tool_ms,
           if(countIf(stage = 'post') > 0, sumIf(duration_ms, stage = 'post'), NULL) AS post_stage_ms
    FROM spans FINAL
    WHERE project_id = {project_id:UInt32} AND role = 'stage' AND parent_span_id != ''
      AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
      AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
    GROUP BY trace_id, parent_span_id
)
SELECT
    a.project_id, a.service, a.instance, a.tenant, a.route, a.model, a.form, a.run_id, a.trace_id, a.span_id,
    a.attempt, a.status, a.retry_cause, a.connection_reused, a.cap, a.input_tokens, a.output_tokens,
    a.start_at, assumeNotNull(a.queued_at), a.admitted_at, a.first_token_at, a.last_token_at, a.released_at,
    a.t_queue_ms, a.t_conn_ms, a.t_first_token_ms, a.t_stream_ms, a.t_post_ms,
    multiIf(coalesce(h.h_span_id, '') != '', if(a.span_id = h.h_span_id, 0., NULL),
            mapContains(a.span_attributes, 'llm.run.id') OR mapContains(a.resource_attributes, 'llm.run.id')
            OR mapContains(a.span_attributes, 'llm.attempt') OR mapContains(a.span_attributes, 'http.request.resend_count')
            OR mapContains(a.span_attributes, 'litellm.call_id'), a.t_retry_ms, NULL),
    a.ttft_ms, a.total_ms,
    if(a.own_prep_ms IS NULL AND p.prep_ms IS NULL, NULL, coalesce(a.own_prep_ms, 0) + coalesce(p.prep_ms, 0)),
    if(a.own_network_ms IS NULL AND p.network_ms IS NULL, NULL, coalesce(a.own_network_ms, 0) + coalesce(p.network_ms, 0)),
    if(a.own_retrieval_ms IS NULL AND p.retrieval_ms IS NULL, NULL, coalesce(a.own_retrieval_ms, 0) + coalesce(p.retrieval_ms, 0)),
    if(a.own_tool_ms IS NULL AND p.tool_ms IS NULL, NULL, coalesce(a.own_tool_ms, 0) + coalesce(p.tool_ms, 0)),
    if(a.own_post_stage_ms IS NULL AND p.post_stage_ms IS NULL, NULL, coalesce(a.own_post_stage_ms, 0) + coalesce(p.post_stage_ms, 0)),
    if(coalesce(h.h_span_id, '') != '', a.span_id = h.h_span_id, a.t_retry_ms IS NOT NULL),
    a.run_attempt_count,
    {computed_at:DateTime64(3, 'UTC')}
FROM attempts(project_id = {project_id:UInt32}, start = {start:DateTime64(9, 'UTC')}, end = {end:DateTime64(9, 'UTC')}) AS a
-- the stage spans of the run's root span (the attempt's parent)
LEFT JOIN stage_sums AS p ON p.s_trace_id = a.trace_id AND p.s_parent_span_id = a.parent_span_id
LEFT JOIN held_runs AS h ON h.h_service = a.service AND h.h_run_id = a.run_id
