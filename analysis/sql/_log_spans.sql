-- per span, from its GenAI events sent as log records (otel_logs with its TraceId and SpanId; the event name is
-- EventName, else the attribute event.name): the first chunk event's time (OpenLLMetry's span event name), the last
-- gen_ai.choice's and usage (gen_ai.usage.input_tokens / output_tokens in the attributes, else in a gen_ai.* event's
-- JSON body, at its top or under `usage`). Only the logs of the traces of the window's attempts are read.
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
