-- Recompute the request_buckets rows of one project's attempts queued in [start, end): the attempts
-- view's buckets plus stage sums (ms) from stage spans under the attempt (the view's own_*_ms) and under the run's
-- root span (the attempt's parent: where retrieval and tool stages live). A stage kind with no span is NULL.
-- t_retry is NULL when the run is unknowable: the span names no llm.run.id, llm.attempt,
-- http.request.resend_count or litellm.call_id, so other attempts of its trace need not be tries of the same request.
-- A run held by one attempt (held_runs) has that attempt as its final one.
-- An attempt span alone in its run whose tries are its HTTP client children (http_runs) is its run's final attempt:
-- its ERROR children before the last are the run's failed attempts (rows of their own, the second SELECT). With failed
-- tries it starts at its last try, as a final attempt does (the run began at queued_at - t_retry; the run's total is
-- total + t_retry): queued_at is the last child's start, t_retry that - the first failed child's start, and t_queue,
-- TTFT and total, measured from queued_at, lose the shift (NULL where an instant came before the last try). Where the
-- last try started in the next hour it keeps its start, and t_retry is 0: its total holds the tries (as a held run).
-- Where the span lacks a first or last token instant or token counts, its GenAI events sent as OTLP log records with
-- its context give them (log_spans, filled); what the span gives is never replaced.
-- log_spans, held_runs and http_runs are fragments (_log_spans.sql, ...): where materialize_inputs.sql finds none of
-- what one of them reads, materialize.py sends its empty stand-in (_no_log_spans.sql, ...) instead, which ClickHouse
-- plans in no time: the three take ~40 % of the statement's time to plan (chDB 26.9), most of it on a small window.
INSERT INTO request_buckets
WITH log_spans AS
(
    -- per span, the instants and token counts of its GenAI events sent as log records
    SELECT TraceId AS l_trace_id, SpanId AS l_span_id,
       if(countIf(event = 'gen_ai.content.completion.chunk') > 0,
          minIf(at, event = 'gen_ai.content.completion.chunk'), NULL) AS l_first_token_at,
       if(countIf(event = 'gen_ai.choice') > 0, maxIf(at, event = 'gen_ai.choice'), NULL) AS l_last_token_at,
       max(input_tokens) AS l_input_tokens, max(output_tokens) AS l_output_tokens
FROM
(
    SELECT TraceId, SpanId, toTimeZone(Timestamp, 'UTC') AS at,
           if(EventName != '', EventName, LogAttributes['event.name']) AS event,
           startsWith(event, 'gen_ai.') AS genai,
           coalesce(accurateCastOrNull(toFloat64OrNull(LogAttributes['gen_ai.usage.input_tokens']), 'UInt32'),
                    if(genai, coalesce(JSONExtract(Body, 'gen_ai.usage.input_tokens', 'Nullable(UInt32)'),
                                       JSONExtract(Body, 'usage', 'input_tokens', 'Nullable(UInt32)')), NULL))
               AS input_tokens,
           coalesce(accurateCastOrNull(toFloat64OrNull(LogAttributes['gen_ai.usage.output_tokens']), 'UInt32'),
                    if(genai, coalesce(JSONExtract(Body, 'gen_ai.usage.output_tokens', 'Nullable(UInt32)'),
                                       JSONExtract(Body, 'usage', 'output_tokens', 'Nullable(UInt32)')), NULL))
               AS output_tokens
    FROM otel_logs
    WHERE project_id = {project_id:UInt32} AND SpanId != ''
      -- an attempt's events come after its queued_at, within its call (5 minutes of clock skew and calls of up to
      -- an hour past the window allowed, as the spans' bounds: a call running longer loses its events)
      AND TimestampTime >= {start:DateTime64(9, 'UTC')} - INTERVAL 5 MINUTE
      AND TimestampTime < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
      AND TraceId IN (
          SELECT trace_id FROM spans
          WHERE project_id = {project_id:UInt32} AND role = 'attempt'
            AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
            AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
            AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')})
)
WHERE event IN ('gen_ai.content.completion.chunk', 'gen_ai.choice')
   OR input_tokens IS NOT NULL OR output_tokens IS NOT NULL
GROUP BY TraceId, SpanId
),
filled AS
(
    -- the attempts view's rows with the span's instants and counts, else its logs' (log_spans), and the buckets that
    -- start or end at a token instant measured from those as the view measures them (NULL when out of order)
    SELECT *,
           if(d_first >= 0, d_first, NULL) AS f_t_first_token_ms,
           if(d_stream >= 0, d_stream, NULL) AS f_t_stream_ms,
           if(d_post >= 0, d_post, NULL) AS f_t_post_ms,
           if(d_ttft >= 0, d_ttft, NULL) AS f_ttft_ms
    FROM
    (
        SELECT *,
               (toUnixTimestamp64Nano(f_first_token_at) - toUnixTimestamp64Nano(admitted_at)) / 1e6 - coalesce(t_conn_ms, 0)
                   AS d_first,
               (toUnixTimestamp64Nano(f_last_token_at) - toUnixTimestamp64Nano(f_first_token_at)) / 1e6 AS d_stream,
               (toUnixTimestamp64Nano(released_at) - toUnixTimestamp64Nano(f_last_token_at)) / 1e6 AS d_post,
               (toUnixTimestamp64Nano(f_first_token_at) - toUnixTimestamp64Nano(queued_at)) / 1e6 AS d_ttft
        FROM
        (
            SELECT a.*,
                   coalesce(a.first_token_at, l.l_first_token_at) AS f_first_token_at,
                   coalesce(a.last_token_at, l.l_last_token_at) AS f_last_token_at,
                   coalesce(a.input_tokens, l.l_input_tokens) AS f_input_tokens,
                   coalesce(a.output_tokens, l.l_output_tokens) AS f_output_tokens
            FROM attempts(project_id = {project_id:UInt32}, start = {start:DateTime64(9, 'UTC')}, end = {end:DateTime64(9, 'UTC')}) AS a
            LEFT JOIN log_spans AS l ON l.l_trace_id = a.trace_id AND l.l_span_id = a.span_id
        )
    )
),
held_runs AS
(
    -- per run with a failed try whose last-ended attempt started with the run: that attempt, which holds the others
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
),
http_children AS
(
    -- HTTP client spans (httpx, requests, aiohttp, urllib3 instrumentations; OpenLIT's `POST`) right under a span: the
    -- tries of the call that span is, with a failed one's cause (llm.retry.cause, else from the status code, else
    -- error.type, else a connection error: no answer came)
    SELECT trace_id AS c_trace_id, parent_span_id AS c_parent_span_id, span_id AS c_span_id, start_at AS c_start_at,
           end_at AS c_end_at, duration_ms AS c_duration_ms, status AS c_status,
           multiIf(cause_attribute != '', cause_attribute, c_code = 429, 'rate_limited', c_code >= 500, 'server_error',
                   c_code >= 400, 'client_error', retry_cause != '', retry_cause, 'connection_error') AS c_cause,
           toUInt32OrNull(resend_count) AS c_resend_count
    FROM
    (
        SELECT trace_id, parent_span_id, span_id, start_at, end_at, duration_ms, status, retry_cause,
               span_attributes['llm.retry.cause'] AS cause_attribute,
               span_attributes['http.request.resend_count'] AS resend_count,
               toUInt16OrZero(if(span_attributes['http.response.status_code'] != '',
                                 span_attributes['http.response.status_code'], span_attributes['http.status_code'])) AS c_code
        FROM spans FINAL
        -- TRICKY: PREWHERE by hand (FINAL keeps WHERE from moving there): the attribute maps of the project's other
        -- spans are read only for HTTP client spans; the copies of one span never differ in role or kind
        PREWHERE role = 'other' AND kind = 'client'
        WHERE project_id = {project_id:UInt32} AND parent_span_id != ''
          AND (mapContains(span_attributes, 'http.request.method') OR mapContains(span_attributes, 'http.method'))
          AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 2 HOUR
          AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 2 HOUR
    )
),
http_runs AS
(
    -- the attempt spans alone in their run whose tries are their HTTP client children (http_children), with them
    SELECT p.trace_id AS t_trace_id, p.span_id AS t_span_id, p.service AS t_service, p.instance AS t_instance,
       p.tenant AS t_tenant, p.route AS t_route, p.model AS t_model, p.form AS t_form, p.run_id AS t_run_id,
       p.cap AS t_cap, c.failed AS t_failed, length(c.failed) + 1 AS t_tries,
       -- with failed tries, the span as the final attempt starts at its last try, within the hour of its queued_at
       notEmpty(c.failed) AND c.last_start_at > p.p_queued_at
           AND toStartOfHour(c.last_start_at) = toStartOfHour(p.p_queued_at) AS t_moved,
       if(t_moved, c.last_start_at, p.p_queued_at) AS t_queued_at,
       if(t_moved, (toUnixTimestamp64Nano(c.last_start_at) - toUnixTimestamp64Nano(p.p_queued_at)) / 1e6, 0.)
           AS t_shift_ms,
       -- t_retry: from the first failed try's start to the last try's (0 without a failed try, or unmoved)
       if(t_moved, (toUnixTimestamp64Nano(c.last_start_at) - toUnixTimestamp64Nano(c.failed[1].2)) / 1e6, 0.)
           AS t_tries_retry_ms
FROM
(
    SELECT trace_id, span_id, service, instance, tenant, route, model, form, run_id, cap,
           assumeNotNull(queued_at) AS p_queued_at
    FROM spans FINAL
    PREWHERE role = 'attempt'
    WHERE project_id = {project_id:UInt32}
      AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 2 HOUR
      AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
      AND (service, run_id) IN (
          SELECT service, run_id FROM spans
          WHERE project_id = {project_id:UInt32} AND role = 'attempt'
            AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 2 HOUR
            AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
          GROUP BY service, run_id
          HAVING uniqExact(span_id) = 1)
) AS p
INNER JOIN
(
    -- per parent: the last child's start, and the ERROR children before it in start order, numbered
    SELECT c_trace_id, c_parent_span_id, children[-1].2 AS last_start_at,
           arrayMap((x, i) -> (x.1, x.2, x.3, x.4, x.5, toUInt16(least(65535, coalesce(x.6 + 1, i)))),
                    errors, arrayEnumerate(errors)) AS failed
    FROM
    (
        SELECT c_trace_id, c_parent_span_id,
               arraySort(x -> (x.2, x.1), groupArray((c_span_id, c_start_at, c_end_at, c_duration_ms, c_cause,
                                                      c_resend_count, c_status))) AS children,
               arrayFilter(x -> x.7 = 'error', arrayPopBack(children)) AS errors
        FROM http_children
        GROUP BY c_trace_id, c_parent_span_id
    )
) AS c ON c.c_trace_id = p.trace_id AND c.c_parent_span_id = p.span_id
)
SELECT
    a.project_id, a.service, a.instance, a.tenant, a.route, a.model, a.form, a.run_id, a.trace_id, a.span_id,
    if(coalesce(t.t_span_id, '') != '', t.t_tries, a.attempt), a.status, a.retry_cause, a.connection_reused, a.cap,
    a.f_input_tokens, a.f_output_tokens,
    -- with failed HTTP tries the final attempt starts at its last try: queued_at and what is measured from it move
    a.start_at, if(t.t_shift_ms > 0, t.t_queued_at, assumeNotNull(a.queued_at)),
    a.admitted_at, a.f_first_token_at, a.f_last_token_at, a.released_at,
    if(a.t_queue_ms - t.t_shift_ms >= 0, a.t_queue_ms - t.t_shift_ms, NULL),
    a.t_conn_ms, a.f_t_first_token_ms, a.f_t_stream_ms, a.f_t_post_ms,
    multiIf(coalesce(h.h_span_id, '') != '', if(a.span_id = h.h_span_id, 0., NULL),
            coalesce(t.t_span_id, '') != '', t.t_tries_retry_ms,
            mapContains(a.span_attributes, 'llm.run.id') OR mapContains(a.resource_attributes, 'llm.run.id')
            OR mapContains(a.span_attributes, 'llm.attempt') OR mapContains(a.span_attributes, 'http.request.resend_count')
            OR mapContains(a.span_attributes, 'litellm.call_id'), a.t_retry_ms, NULL),
    if(a.f_ttft_ms - t.t_shift_ms >= 0, a.f_ttft_ms - t.t_shift_ms, NULL),
    if(a.total_ms - t.t_shift_ms >= 0, a.total_ms - t.t_shift_ms, NULL),
    if(a.own_prep_ms IS NULL AND p.prep_ms IS NULL, NULL, coalesce(a.own_prep_ms, 0) + coalesce(p.prep_ms, 0)),
    if(a.own_network_ms IS NULL AND p.network_ms IS NULL, NULL, coalesce(a.own_network_ms, 0) + coalesce(p.network_ms, 0)),
    if(a.own_retrieval_ms IS NULL AND p.retrieval_ms IS NULL, NULL, coalesce(a.own_retrieval_ms, 0) + coalesce(p.retrieval_ms, 0)),
    if(a.own_tool_ms IS NULL AND p.tool_ms IS NULL, NULL, coalesce(a.own_tool_ms, 0) + coalesce(p.tool_ms, 0)),
    if(a.own_post_stage_ms IS NULL AND p.post_stage_ms IS NULL, NULL, coalesce(a.own_post_stage_ms, 0) + coalesce(p.post_stage_ms, 0)),
    multiIf(coalesce(h.h_span_id, '') != '', a.span_id = h.h_span_id, coalesce(t.t_span_id, '') != '', true,
            a.t_retry_ms IS NOT NULL),
    if(coalesce(t.t_span_id, '') != '', t.t_tries, a.run_attempt_count),
    {computed_at:DateTime64(3, 'UTC')}
FROM filled AS a
-- the stage spans of the run's root span (the attempt's parent)
LEFT JOIN stage_sums AS p ON p.s_trace_id = a.trace_id AND p.s_parent_span_id = a.parent_span_id
LEFT JOIN held_runs AS h ON h.h_service = a.service AND h.h_run_id = a.run_id
LEFT JOIN http_runs AS t ON t.t_trace_id = a.trace_id AND t.t_span_id = a.span_id
UNION ALL
-- the failed tries of the http_runs started in the window: an attempt each, of the run of their parent (its service,
-- tenant, route, model, form); a try's instants are its span's start and end, its only bucket its total
SELECT
    {project_id:UInt32}, t.t_service, t.t_instance, t.t_tenant, t.t_route, t.t_model, t.t_form, t.t_run_id,
    t.t_trace_id, f.1, f.6, 'error', f.5, NULL, t.t_cap, NULL, NULL,
    f.2, f.2, NULL, NULL, NULL, f.3,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, f.4,
    NULL, NULL, NULL, NULL, NULL,
    false, t.t_tries,
    {computed_at:DateTime64(3, 'UTC')}
FROM http_runs AS t
ARRAY JOIN t.t_failed AS f
WHERE f.2 >= {start:DateTime64(9, 'UTC')} AND f.2 < {end:DateTime64(9, 'UTC')}
