-- The engine's scheduler gauges of one service, sample by sample: requests waiting and running per instance at each
-- instant both were reported (vLLM num_requests_waiting/running, SGLang num_queue_reqs/num_running_reqs, TGI
-- queue_size/batch_current_size). What gap_fraction is computed from when the traces carry no queued/admitted events.
SELECT Instance AS instance, TimeUnix AS at,
    avgIf(Value, MetricName IN {waiting:Array(String)}) AS waiting,
    avgIf(Value, MetricName IN {running:Array(String)}) AS running
FROM otel_metrics_gauge
WHERE ProjectId = {project_id:UInt32} AND ServiceName = {service:String}
  AND MetricName IN arrayConcat({waiting:Array(String)}, {running:Array(String)})
  AND TimeUnix >= {start:DateTime64(9, 'UTC')} AND TimeUnix < {end:DateTime64(9, 'UTC')} AND isFinite(Value)
GROUP BY instance, at
HAVING countIf(MetricName IN {waiting:Array(String)}) > 0 AND countIf(MetricName IN {running:Array(String)}) > 0
ORDER BY instance, at
