-- 0031's scheduler_pieces for a list of services (empty: every service of the project) instead of one:
-- a diagnosis's sweep over the minute job's 15-minute window is mostly planning (~100-150 ms of a ~150-230 ms read on
-- the 10M-span bench data), so the diagnose steps read a few services' sweeps at once (analysis/sweeps.py).
CREATE OR REPLACE VIEW scheduler_pieces AS
SELECT
    -- grouping sets leave the keys a row is not grouped by empty: instance rows have tenant '', tenant rows instance ''
    project_id, service, hour, grouping(tenant) = 1 AS is_instance_row, instance, tenant,
    if(is_instance_row, b * any(width), toUnixTimestamp64Nano(toDateTime64(hour, 9, 'UTC'))) AS bucket_ns,
    argMax(cap, t) AS last_cap,
    max(t) AS cap_at,
    sumIf(hi - lo, queue > 0) / 1e6 AS backlog_ms,
    sumIf(hi - lo, queue > 0 AND in_flight < coalesce(cap, 0)) / 1e6 AS gap_ms,
    sum((hi - lo) * queue) / 1e6 AS queue_ms,
    sum((hi - lo) * in_flight) / 1e6 AS in_flight_ms,
    sum(hi - lo) / 1e6 AS covered_ms,
    maxIf(queue, hi > lo) AS queue_max,
    maxIf(in_flight, hi > lo) AS in_flight_max,
    sumIf(-df * b_before, b = intDiv(lo0, width)) / 1e6 AS in_flight_backlog_ms,
    countIf(kind = 0 AND b = intDiv(lo0, width) AND t >= hour_lo) AS attempts
FROM
(
    -- each step [t, next_t) split at bucket edges (a zero-length step keeps one piece for the tenant sum)
    SELECT *, toInt64(arrayJoin(range(toUInt64(intDiv(lo0, width)),
                                      toUInt64(greatest(intDiv(hi0 - 1, width), intDiv(lo0, width)) + 1)))) AS b,
           greatest(lo0, b * width) AS lo, greatest(least(hi0, (b + 1) * width), lo) AS hi
    FROM
    (
        -- each instance-hour's events in order (t, then a fixed tie order), the state after each of them as arrays:
        -- running sums and fills over a sorted array (at a backfill's size a third of the window functions' time)
        SELECT project_id, service, instance, hour, hour_lo, width, e.1 AS t, e.2 AS span_key, e.3 AS kind,
               e.5 AS df, e.7 AS tenant, cap, queue, in_flight, lo0, hi0, b_before
        FROM
        (
            SELECT project_id, service, instance, hour, any(hour_lo) AS hour_lo, any(hour_hi) AS hour_hi,
                   toInt64({bucket_ms:UInt32}) * 1000000 AS width,
                   arraySort(groupArray((t, span_key, kind, toInt64(dq), toInt64(df), event_cap, tenant))) AS events,
                   -- the llm.scheduler.cap of the latest attempt queued so far (NULL until one gave it)
                   arrayFill(x -> isNotNull(x), arrayMap(x -> if(x.3 = 0, x.6, NULL), events)) AS caps,
                   arrayCumSum(arrayMap(x -> x.4, events)) AS queues,
                   arrayCumSum(arrayMap(x -> x.5, events)) AS in_flights,
                   -- the step [t, next t) clipped to the hour's part of the window: time outside counts for nothing
                   arrayMap(x -> x.1, events) AS ts,
                   arrayMap(x -> least(greatest(x, hour_lo), hour_hi), ts) AS lo0s,
                   arrayMap(x -> least(greatest(x, hour_lo), hour_hi), arrayPushBack(arrayPopFront(ts), ts[-1])) AS hi0s,
                   arrayMap((q, lo, hi) -> if(q > 0, hi - lo, 0), queues, lo0s, hi0s) AS backlogs,
                   -- B before each event: the instance's backlog time over the hour's earlier steps
                   arrayMap((c, x) -> c - x, arrayCumSum(backlogs), backlogs) AS b_befores
            FROM
            (
                -- +1 queue at queued_at; -1 queue +1 in_flight at admitted_at (queued_at when absent, the
                -- convention); -1 in_flight at released_at (no earlier than admitted_at); once per hour the
                -- attempt is queued or in flight in
                SELECT project_id, service, instance, tenant, cap AS event_cap, cityHash64(span_id) AS span_key,
                       toDateTime(intDiv(h, 1000000000), 'UTC') AS hour,
                       greatest(h, toUnixTimestamp64Nano({start:DateTime64(9, 'UTC')})) AS hour_lo,
                       least(h + 3600000000000, toUnixTimestamp64Nano({end:DateTime64(9, 'UTC')})) AS hour_hi,
                       e.1 AS t, e.2 AS dq, e.3 AS df, e.4 AS kind
                FROM
                (
                    SELECT project_id, service, instance, tenant, cap, span_id, q, r,
                           arrayJoin([(q, 1, 0, 0), (a, -1, 1, 1), (r, 0, -1, 2)]) AS e,
                           -- the hours (ns) of the window this attempt is queued or in flight in, but the core's
                           arrayJoin(arrayFilter(x -> x < toUnixTimestamp64Nano({core_start:DateTime64(9, 'UTC')})
                                                     OR x >= toUnixTimestamp64Nano({core_end:DateTime64(9, 'UTC')}),
                               arrayMap(x -> x * 3600000000000, range(
                               toUInt64(intDiv(greatest(q, toUnixTimestamp64Nano({start:DateTime64(9, 'UTC')})), 3600000000000)),
                               toUInt64(intDiv(least(r, toUnixTimestamp64Nano({end:DateTime64(9, 'UTC')}) - 1), 3600000000000) + 1))))) AS h
                    FROM
                    (
                        SELECT project_id, service, instance, tenant, cap, span_id,
                               toUnixTimestamp64Nano(queued_at) AS q,
                               toUnixTimestamp64Nano(coalesce(admitted_at, queued_at)) AS a,
                               toUnixTimestamp64Nano(greatest(coalesce(released_at, admitted_at, queued_at),
                                                              coalesce(admitted_at, queued_at))) AS r
                        FROM request_buckets
                        -- an empty window (a read's missing edge) reads nothing
                        WHERE {start:DateTime64(9, 'UTC')} < {end:DateTime64(9, 'UTC')}
                          AND project_id = {project_id:UInt32} AND (empty({services:Array(String)}) OR service IN {services:Array(String)})
                          AND (toStartOfHour(queued_at), computed_at) IN (
                              SELECT hour, max(computed_at) FROM materialized_hours
                              WHERE project_id = {project_id:UInt32} GROUP BY hour)
                          -- every attempt queued or in flight during the window's part before the core or after it
                          -- (a queue's state at an hour's start comes from attempts queued before it); the start_at
                          -- bounds (an hour wider) let the read skip the core's parts
                          AND ((start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
                                AND start_at < {core_start:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
                                AND queued_at < {core_start:DateTime64(9, 'UTC')}
                                AND coalesce(released_at, admitted_at, queued_at) >= {start:DateTime64(9, 'UTC')})
                               OR (start_at >= {core_end:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
                                   AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
                                   AND queued_at < {end:DateTime64(9, 'UTC')}
                                   AND coalesce(released_at, admitted_at, queued_at) >= {core_end:DateTime64(9, 'UTC')}))
                    )
                )
            )
            GROUP BY project_id, service, instance, hour
        )
        ARRAY JOIN events AS e, caps AS cap, queues AS queue, in_flights AS in_flight, lo0s AS lo0, hi0s AS hi0,
                   b_befores AS b_before
    )
)
GROUP BY GROUPING SETS ((project_id, service, hour, instance, b), (project_id, service, hour, tenant))
-- an instance's zero-length steps at the end of an hour's part of the window would make a minute row past it
HAVING NOT is_instance_row
    OR bucket_ns < least(toUnixTimestamp64Nano(toDateTime64(hour, 9, 'UTC')) + 3600000000000,
                              toUnixTimestamp64Nano({end:DateTime64(9, 'UTC')}))
