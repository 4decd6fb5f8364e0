-- Recompute the layer links of one project whose gateway call or engine attempt was queued in [start, end): each
-- attempt of one service (the engine's server span) under an attempt of another service in the same trace (the
-- gateway's call to it), directly or through one non-attempt span between them (an HTTP client span of the call).
-- With the gateway's server span above the call (its parent, same service, kind server, not an attempt):
--   t_gateway         = the server span's duration minus its calls' (time in the gateway outside its calls)
--   t_network_ttft    = the call's TTFT minus the engine's TTFT
--   t_network_total   = the call's total minus the engine's total
-- each NULL where a side does not give it. Runs after materialize_request_buckets (reads its current rows).
-- Only traces whose attempts span two services or more are read: a fleet traced at one layer costs one scan of
-- request_buckets. A side arriving later re-dirties its hour, and the hour's recompute finds the pair.
INSERT INTO layer_links
WITH
traces AS
(
    {{layer_traces}}
),
attempt_rows AS
(
    SELECT service, instance, trace_id, span_id, start_at, queued_at, ttft_ms, total_ms
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND {{current}}
      AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
      AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
      AND trace_id IN (SELECT trace_id FROM traces)
),
tree AS
(
    -- every span of those traces: its parent, service, kind and role, to climb from an engine attempt to its caller
    SELECT trace_id, span_id, parent_span_id, service, kind, role, duration_ms
    FROM spans FINAL
    WHERE project_id = {project_id:UInt32}
      AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 2 HOUR
      AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 2 HOUR
      AND trace_id IN (SELECT trace_id FROM traces)
),
callers AS
(
    -- (engine attempt, the attempt span that called it): its parent when that is an attempt, else its grandparent
    SELECT e.trace_id AS trace_id, e.span_id AS engine_span_id,
           if(p.role = 'attempt', p.span_id, p.parent_span_id) AS call_span_id
    FROM tree AS e
    INNER JOIN tree AS p ON p.trace_id = e.trace_id AND p.span_id = e.parent_span_id
    WHERE e.role = 'attempt' AND e.parent_span_id != ''
),
servers AS
(
    -- a gateway's server span and the summed durations of the attempt spans directly under it
    SELECT s.trace_id AS trace_id, s.span_id AS server_span_id, any(s.duration_ms) AS server_ms,
           sum(c.duration_ms) AS calls_ms
    FROM tree AS s
    INNER JOIN tree AS c ON c.trace_id = s.trace_id AND c.parent_span_id = s.span_id
    WHERE s.kind = 'server' AND s.role != 'attempt' AND c.role = 'attempt' AND c.service = s.service
    GROUP BY s.trace_id, s.span_id
)
SELECT
    {project_id:UInt32}, g.service, e.service, e.instance, k.trace_id, k.call_span_id, k.engine_span_id,
    ifNull(srv.server_span_id, ''), g.start_at, g.queued_at, g.ttft_ms, g.total_ms, e.ttft_ms, e.total_ms,
    if(srv.server_span_id IS NULL, NULL, greatest(0., srv.server_ms - srv.calls_ms)),
    if(g.ttft_ms IS NULL OR e.ttft_ms IS NULL, NULL, g.ttft_ms - e.ttft_ms),
    if(g.total_ms IS NULL OR e.total_ms IS NULL, NULL, g.total_ms - e.total_ms),
    {computed_at:DateTime64(3, 'UTC')}
FROM callers AS k
INNER JOIN attempt_rows AS e ON e.trace_id = k.trace_id AND e.span_id = k.engine_span_id
INNER JOIN attempt_rows AS g ON g.trace_id = k.trace_id AND g.span_id = k.call_span_id
LEFT JOIN tree AS cs ON cs.trace_id = k.trace_id AND cs.span_id = k.call_span_id
LEFT JOIN servers AS srv ON srv.trace_id = k.trace_id AND srv.server_span_id = cs.parent_span_id
WHERE g.service != e.service
  AND ((g.queued_at >= {start:DateTime64(9, 'UTC')} AND g.queued_at < {end:DateTime64(9, 'UTC')})
       OR (e.queued_at >= {start:DateTime64(9, 'UTC')} AND e.queued_at < {end:DateTime64(9, 'UTC')}))
SETTINGS join_use_nulls = 1
