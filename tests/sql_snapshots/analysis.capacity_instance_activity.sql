-- Per instance of one service over [start, end): how long it was active, and its sequences in flight while busy.
-- Active: the minutes in which it had an attempt in flight (queued to released) or sent an engine metric sample, each
-- counted for its part inside the window and inside the instance's own first and last sign of life (so a window
-- reaching past its traffic adds nothing: active_seconds). In flight from the traces: the time integral of its
-- attempts from admission (else queued) to release, as the scheduler sweep's in_flight_ms, summed over its busy
-- minutes (those with any; busy_ms their length in the window). From the engine: the running gauge's samples above 0
-- (sum and count) and how many samples it sent at all.
WITH toUnixTimestamp64Nano({start:DateTime64(9, 'UTC')}) AS lo,
     toUnixTimestamp64Nano({end:DateTime64(9, 'UTC')}) AS hi,
     toInt64(60000000000) AS minute_ns
SELECT instance,
       sum(greatest(least((m + 1) * minute_ns, hi, last_all) - greatest(m * minute_ns, lo, first_all), 0)) / 1e9
           AS active_seconds,
       sumIf(in_flight_ns, in_flight_ns > 0) / 1e6 AS busy_in_flight_ms,
       sumIf(least((m + 1) * minute_ns, hi) - greatest(m * minute_ns, lo), in_flight_ns > 0) / 1e6 AS busy_ms,
       sum(running_sum) AS running_sum,
       sum(running_busy) AS running_busy,
       sum(running_samples) AS running_samples
FROM
(
    SELECT instance, m, sum(in_flight_ns) AS in_flight_ns, sum(running_sum) AS running_sum,
           sum(running_busy) AS running_busy, sum(running_samples) AS running_samples,
           min(min(first_ns)) OVER (PARTITION BY instance) AS first_all,
           max(max(last_ns)) OVER (PARTITION BY instance) AS last_all
    FROM
    (
        -- each attempt's time in flight within each minute it was present in (queued to released, inside the window)
        SELECT instance, m,
               toFloat64(greatest(least(r, (m + 1) * minute_ns, hi) - greatest(a, m * minute_ns, lo), 0)) AS in_flight_ns,
               toFloat64(0) AS running_sum, toUInt64(0) AS running_busy, toUInt64(0) AS running_samples,
               q AS first_ns, r AS last_ns
        FROM
        (
            SELECT instance, q, a, r,
                   arrayJoin(range(intDiv(greatest(q, lo), minute_ns), intDiv(least(r, hi - 1), minute_ns) + 1)) AS m
            FROM
            (
                SELECT instance,
                       toUnixTimestamp64Nano(queued_at) AS q,
                       toUnixTimestamp64Nano(coalesce(admitted_at, queued_at)) AS a,
                       toUnixTimestamp64Nano(greatest(coalesce(released_at, admitted_at, queued_at),
                                                      coalesce(admitted_at, queued_at))) AS r
                FROM request_buckets
                WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String}
                  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 2 HOUR
                  AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
                  AND queued_at < {end:DateTime64(9, 'UTC')}
                  AND coalesce(released_at, admitted_at, queued_at) >= {start:DateTime64(9, 'UTC')}
            )
        )
        UNION ALL
        -- the engine's samples: every metric says the instance was up; the running gauge says how busy
        SELECT Instance AS instance, intDiv(toUnixTimestamp64Nano(TimeUnix), minute_ns) AS m, toFloat64(0) AS in_flight_ns,
               sumIf(Value, MetricName IN {running:Array(String)} AND Value > 0) AS running_sum,
               countIf(MetricName IN {running:Array(String)} AND Value > 0) AS running_busy,
               countIf(MetricName IN {running:Array(String)}) AS running_samples,
               min(toUnixTimestamp64Nano(TimeUnix)) AS first_ns, max(toUnixTimestamp64Nano(TimeUnix)) AS last_ns
        FROM otel_metrics_gauge
        WHERE ProjectId = {project_id:UInt32} AND ServiceName = {service:String}
          AND TimeUnix >= {start:DateTime64(9, 'UTC')} AND TimeUnix < {end:DateTime64(9, 'UTC')} AND isFinite(Value)
        GROUP BY instance, m
        UNION ALL
        SELECT Instance AS instance, intDiv(toUnixTimestamp64Nano(TimeUnix), minute_ns) AS m, toFloat64(0) AS in_flight_ns,
               toFloat64(0) AS running_sum, toUInt64(0) AS running_busy, toUInt64(0) AS running_samples,
               min(toUnixTimestamp64Nano(TimeUnix)) AS first_ns, max(toUnixTimestamp64Nano(TimeUnix)) AS last_ns
        FROM otel_metrics_sum
        WHERE ProjectId = {project_id:UInt32} AND ServiceName = {service:String}
          AND TimeUnix >= {start:DateTime64(9, 'UTC')} AND TimeUnix < {end:DateTime64(9, 'UTC')}
        GROUP BY instance, m
    )
    GROUP BY instance, m
)
GROUP BY instance
ORDER BY instance
