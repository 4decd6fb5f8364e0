-- Engine gauges of one service per (instance, minute, metric): mean and max of the points in the minute (a GPU
-- exporter's per-GPU series are averaged together). Non-monotonic sums (an OTel SDK up-down counter) are gauges too.
SELECT Instance AS instance, toStartOfMinute(TimeUnix) AS minute, MetricName AS name, avg(Value) AS value, max(Value) AS peak
FROM
(
    SELECT Instance, TimeUnix, MetricName, Value FROM otel_metrics_gauge
    WHERE ProjectId = {project_id:UInt32} AND ServiceName = {service:String} AND MetricName IN {names:Array(String)}
      AND TimeUnix >= {start:DateTime64(9, 'UTC')} AND TimeUnix < {end:DateTime64(9, 'UTC')} AND isFinite(Value)
    UNION ALL
    SELECT Instance, TimeUnix, MetricName, Value FROM otel_metrics_sum
    WHERE ProjectId = {project_id:UInt32} AND ServiceName = {service:String} AND MetricName IN {names:Array(String)}
      AND NOT IsMonotonic
      AND TimeUnix >= {start:DateTime64(9, 'UTC')} AND TimeUnix < {end:DateTime64(9, 'UTC')} AND isFinite(Value)
)
GROUP BY instance, minute, name
ORDER BY instance, minute, name
