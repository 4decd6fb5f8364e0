-- Per minute of the call's queued_at, for each of {services} as a gateway: the p50/p95 (exact) and count of
-- t_gateway over its calls seen at two layers and queued in [start, end) (layer_links). Incident detection judges it
-- beside the attempts' buckets (analysis/incidents/jobs.py): time added in the gateway's server span outside its
-- calls moves none of them. A service without calls seen at two layers has no row.
WITH
calls AS
(
    -- one row per call: a call with two engine attempts under it has one t_gateway
    SELECT gateway_service, call_span_id, any(call_queued_at) AS queued_at, any(t_gateway_ms) AS t_gateway_ms
    FROM layer_links FINAL
    WHERE project_id = {project_id:UInt32} AND gateway_service IN {services:Array(String)}
      AND call_start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
      AND call_start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
      AND call_queued_at >= {start:DateTime64(9, 'UTC')} AND call_queued_at < {end:DateTime64(9, 'UTC')}
    GROUP BY gateway_service, trace_id, call_span_id
)
SELECT
    gateway_service AS service,
    toStartOfMinute(queued_at) AS minute,
    quantilesExactInclusive(0.5, 0.95)(t_gateway_ms) AS t_gateway_q,
    count(t_gateway_ms) AS t_gateway_count
FROM calls
GROUP BY service, minute
ORDER BY service, minute
