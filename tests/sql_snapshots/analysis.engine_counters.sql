-- Engine counters of one service: the increase per (instance, minute, metric). Cumulative series: each point minus
-- the one before it in the same series (instance, metric, attributes); a value below the one before is a reset, so
-- the increase is the value itself; a series' first point adds nothing (its earlier history is unknown). The read
-- starts 10 minutes early so the window's first minute has a point before it. Delta series add up as they are.
SELECT instance, minute, name, sum(increase) AS value
FROM
(
    SELECT Instance AS instance, MetricName AS name, toStartOfMinute(TimeUnix) AS minute, TimeUnix,
        Value - lagInFrame(Value, 1, Value) OVER series AS step,
        if(AggregationTemporality = 1, Value, if(step < 0, Value, step)) AS increase
    FROM otel_metrics_sum
    WHERE ProjectId = {project_id:UInt32} AND ServiceName = {service:String} AND MetricName IN {names:Array(String)}
      AND IsMonotonic AND isFinite(Value)
      AND TimeUnix >= {start:DateTime64(9, 'UTC')} - INTERVAL 10 MINUTE AND TimeUnix < {end:DateTime64(9, 'UTC')}
    WINDOW series AS (PARTITION BY Instance, MetricName, toString(Attributes) ORDER BY TimeUnix
                      ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)
)
WHERE TimeUnix >= {start:DateTime64(9, 'UTC')}
GROUP BY instance, minute, name
ORDER BY instance, minute, name
