-- Latency against load for one service over [start, end). The load of each instance-minute is one of three measures
-- ({measure}): 'in_flight', the mean sequences in flight (the time integral of its attempts from admission, else
-- queued, to release, over the minute's part inside the window: the scheduler sweep's in_flight_ms / covered_ms);
-- 'running', the mean of the engine's running gauge in the minute; 'rps', attempts queued per second. Each
-- instance-minute goes to one of {bins} equal levels from 0 to the largest load seen, and brings the latency of its
-- successful attempts queued in it (route filter; TTFT and total, exact p50/p90/p95/p99 per level).
-- Grouping sets: one row per level (is_level), and one per minute with the mean load over its instances (the fleet's).
WITH toUnixTimestamp64Nano({start:DateTime64(9, 'UTC')}) AS lo,
     toUnixTimestamp64Nano({end:DateTime64(9, 'UTC')}) AS hi,
     toInt64(60000000000) AS minute_ns
SELECT grouping(level) = 0 AS is_level, level, m,
       count() AS minutes,
       avg(load) AS mean_load,
       quantilesExactInclusiveMerge(0.5, 0.9, 0.95, 0.99)(ttft_state) AS ttft_q,
       sum(ttft_count) AS ttft_values,
       countIf(ttft_count > 0) AS ttft_minutes,
       quantilesExactInclusiveMerge(0.5, 0.9, 0.95, 0.99)(total_state) AS total_q,
       sum(total_count) AS total_values,
       countIf(total_count > 0) AS total_minutes
FROM
(
    SELECT l.instance AS instance, l.m AS m, l.load AS load,
           t.ttft_state AS ttft_state, t.ttft_count AS ttft_count, t.total_state AS total_state, t.total_count AS total_count,
           least(toUInt32(floor(load / greatest(max(load) OVER (), 1e-9) * {bins:UInt32})), {bins:UInt32} - 1) AS level
    FROM
    (
        -- the load of each instance-minute, in the chosen measure
        SELECT instance, m, sum(ns) / (least((m + 1) * minute_ns, hi) - greatest(m * minute_ns, lo)) AS load
        FROM
        (
            SELECT instance, a, r,
                   arrayJoin(range(intDiv(greatest(a, lo), minute_ns), intDiv(least(r, hi - 1), minute_ns) + 1)) AS m,
                   greatest(least(r, (m + 1) * minute_ns, hi) - greatest(a, m * minute_ns, lo), 0) AS ns
            FROM
            (
                SELECT instance,
                       toUnixTimestamp64Nano(coalesce(admitted_at, queued_at)) AS a,
                       toUnixTimestamp64Nano(greatest(coalesce(released_at, admitted_at, queued_at),
                                                      coalesce(admitted_at, queued_at))) AS r
                FROM request_buckets
                WHERE {measure:String} = 'in_flight'
                  AND project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String}
                  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 2 HOUR
                  AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
                  AND coalesce(admitted_at, queued_at) < {end:DateTime64(9, 'UTC')}
                  AND coalesce(released_at, admitted_at, queued_at) >= {start:DateTime64(9, 'UTC')}
            )
        )
        GROUP BY instance, m
        HAVING load > 0
        UNION ALL
        SELECT Instance AS instance, intDiv(toUnixTimestamp64Nano(TimeUnix), minute_ns) AS m, avg(Value) AS load
        FROM otel_metrics_gauge
        WHERE {measure:String} = 'running'
          AND ProjectId = {project_id:UInt32} AND ServiceName = {service:String} AND MetricName IN {running:Array(String)}
          AND TimeUnix >= {start:DateTime64(9, 'UTC')} AND TimeUnix < {end:DateTime64(9, 'UTC')} AND isFinite(Value)
        GROUP BY instance, m
        UNION ALL
        SELECT instance, intDiv(toUnixTimestamp64Nano(queued_at), minute_ns) AS m,
               count() * 1e9 / (least((m + 1) * minute_ns, hi) - greatest(m * minute_ns, lo)) AS load
        FROM request_buckets
        WHERE {measure:String} = 'rps'
          AND project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String} AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
        GROUP BY instance, m
    ) AS l
    LEFT JOIN
    (
        -- the latency of the successful attempts queued in each instance-minute
        SELECT instance, intDiv(toUnixTimestamp64Nano(queued_at), minute_ns) AS m,
               quantilesExactInclusiveStateIf(0.5, 0.9, 0.95, 0.99)(ttft_ms, status != 'error' AND ttft_ms IS NOT NULL) AS ttft_state,
               countIf(status != 'error' AND ttft_ms IS NOT NULL) AS ttft_count,
               quantilesExactInclusiveStateIf(0.5, 0.9, 0.95, 0.99)(total_ms, status != 'error' AND total_ms IS NOT NULL) AS total_state,
               countIf(status != 'error' AND total_ms IS NOT NULL) AS total_count
        FROM request_buckets
        WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String} AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
        GROUP BY instance, m
    ) AS t ON t.instance = l.instance AND t.m = l.m
)
GROUP BY GROUPING SETS ((level), (m))
