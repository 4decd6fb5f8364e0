-- The scheduler sweep as it was before analysis/rollups/aggregates.py (every attempt of the window swept at once): the
-- reference tests/analysis/test_scheduler_minutes.py holds the stored minutes and cut windows to.
-- Scheduler state of each instance of one service (docs/span-convention.md, "Scheduler state over time")
-- over the window [start, end), swept from every attempt queued or in flight during it; route and tenant filters do not apply (an instance's
-- queue is every route's and tenant's). One pass, two groupings:
-- * per instance and bucket of {bucket_ms} ms (epoch-aligned; tenant = ''): cap (the
--   llm.scheduler.cap of the latest attempt queued so far, so a cap changed mid-window counts from then
--   on; NULL unknown), backlog_ms (queue_depth > 0), gap_ms (... and
--   in_flight < cap), queue_ms / in_flight_ms (integrals, count x ms), maxima, covered_ms;
-- * per tenant (instance = ''): in_flight_backlog_ms, the slot time its attempts held while their
--   instance had a queue, and its attempts.
-- TRICKY: events are not grouped per instant but put in one total order (t, hash of span_id, kind);
-- ties then add zero-length steps, and with B(t) = backlog time before t an attempt's overlap with
-- backlog is B(released) - B(admitted) = the sum of -df x B over its in-flight events.
-- Bounded: the {limit} instances with the most backlog (then in-flight time) and the {limit} tenants with the most
-- slot time during backlog keep their rows; every other instance's rows are pooled per bucket, and every other
-- tenant's into one row (is_others = 1, names ''; folded = how many instances or tenants they hold), so the rows
-- stay at most ({limit} + 1) x buckets + {limit} + 1 however many instances and tenants there are. capped_backlog_ms:
-- backlog of instances that reported a cap at some point (gap_fraction's denominator); uncapped_backlog_ms: backlog
-- in buckets where the instance's cap was still unknown.
SELECT
    is_instance_row,
    NOT kept AS is_others,
    if(kept, instance, '') AS instance_name,
    bucket_start_ms,
    if(kept, tenant, '') AS tenant_name,
    if(kept, any(instance_cap), NULL) AS cap,
    sum(backlog_ms) AS backlog_ms_sum,
    sumIf(backlog_ms, instance_capped) AS capped_backlog_ms,
    sumIf(backlog_ms, instance_cap IS NULL) AS uncapped_backlog_ms,
    sum(gap_ms) AS gap_ms_sum,
    sum(queue_ms) AS queue_ms_sum,
    sum(in_flight_ms) AS in_flight_ms_sum,
    sum(covered_ms) AS covered_ms_sum,
    max(queue_max) AS queue_max_all,
    max(in_flight_max) AS in_flight_max_all,
    sum(in_flight_backlog_ms) AS in_flight_backlog_ms_sum,
    sum(attempts) AS attempts_sum,
    if(kept, 0, any(names) - {limit:UInt32}) AS folded
FROM
(
    -- kept: the row's instance (instance rows) or tenant (tenant rows) ranks within {limit}
    SELECT *, if(is_instance_row, instance_rank, tenant_rank) <= {limit:UInt32} AS kept
    FROM
    (
        SELECT *,
               dense_rank() OVER (PARTITION BY is_instance_row ORDER BY instance_backlog_ms DESC, instance_in_flight_ms DESC, instance) AS instance_rank,
               row_number() OVER (PARTITION BY is_instance_row ORDER BY in_flight_backlog_ms DESC, tenant) AS tenant_rank
        FROM
        (
            -- each instance's totals over the window, whether it ever reported a cap, and how many instances
            -- (instance rows) or tenants (tenant rows) there are
            SELECT *, sum(backlog_ms) OVER i AS instance_backlog_ms, sum(in_flight_ms) OVER i AS instance_in_flight_ms,
                   max(instance_cap IS NOT NULL) OVER i AS instance_capped,
                   uniqExact(if(is_instance_row, instance, tenant)) OVER (PARTITION BY is_instance_row) AS names
            FROM
            (
                SELECT
                    grouping(tenant) = 1 AS is_instance_row,
                    instance,
                    b * {bucket_ms:UInt32} AS bucket_start_ms,
                    tenant,
                    argMax(cap, t) AS instance_cap,
                    sumIf(hi - lo, queue > 0) / 1e6 AS backlog_ms,
                    sumIf(hi - lo, queue > 0 AND in_flight < coalesce(cap, 0)) / 1e6 AS gap_ms,
                    sum((hi - lo) * queue) / 1e6 AS queue_ms,
                    sum((hi - lo) * in_flight) / 1e6 AS in_flight_ms,
                    sum(hi - lo) / 1e6 AS covered_ms,
                    maxIf(queue, hi > lo) AS queue_max,
                    maxIf(in_flight, hi > lo) AS in_flight_max,
                    sumIf(-df * b_before, b = intDiv(lo0, width)) / 1e6 AS in_flight_backlog_ms,
                    countIf(kind = 0 AND b = intDiv(lo0, width) AND t >= toUnixTimestamp64Nano({start:DateTime64(9, 'UTC')})) AS attempts
                FROM
                (
                    -- each step [t, next_t) split at bucket edges (a zero-length step keeps one piece for the tenant sum)
                    SELECT *, toInt64(arrayJoin(range(toUInt64(intDiv(lo0, width)), toUInt64(greatest(intDiv(hi0 - 1, width), intDiv(lo0, width)) + 1)))) AS b,
                           greatest(lo0, b * width) AS lo, greatest(least(hi0, (b + 1) * width), lo) AS hi
                    FROM
                    (
                        -- B before each event: the instance's backlog time over earlier steps
                        SELECT *, sum(backlog) OVER w - backlog AS b_before
                        FROM
                        (
                            -- state after each event, until the instance's next event
                            SELECT instance, tenant, t, kind, toInt64(df) AS df, span_key,
                                   toInt64({bucket_ms:UInt32}) * 1000000 AS width,
                                   anyLast(if(kind = 0, event_cap, NULL)) OVER w AS cap,
                                   sum(dq) OVER w AS queue, sum(df) OVER w AS in_flight,
                                   leadInFrame(t, 1, t) OVER w1 AS next_t,
                                   -- the step [t, next_t) clipped to the window: time outside it counts for nothing
                                   least(greatest(t, toUnixTimestamp64Nano({start:DateTime64(9, 'UTC')})), toUnixTimestamp64Nano({end:DateTime64(9, 'UTC')})) AS lo0,
                                   least(greatest(next_t, toUnixTimestamp64Nano({start:DateTime64(9, 'UTC')})), toUnixTimestamp64Nano({end:DateTime64(9, 'UTC')})) AS hi0,
                                   if(queue > 0, hi0 - lo0, 0) AS backlog
                            FROM
                            (
                                -- +1 queue at queued_at; -1 queue +1 in_flight at admitted_at (queued_at when absent,
                                -- the convention); -1 in_flight at released_at (no earlier than admitted_at)
                                SELECT instance, tenant, cap AS event_cap, cityHash64(span_id) AS span_key,
                                       e.1 AS t, e.2 AS dq, e.3 AS df, e.4 AS kind
                                FROM
                                (
                                    SELECT instance, tenant, cap, span_id,
                                           arrayJoin([
                                               (toUnixTimestamp64Nano(queued_at), 1, 0, 0),
                                               (toUnixTimestamp64Nano(coalesce(admitted_at, queued_at)), -1, 1, 1),
                                               (toUnixTimestamp64Nano(greatest(coalesce(released_at, admitted_at, queued_at), coalesce(admitted_at, queued_at))), 0, -1, 2)
                                           ]) AS e
                                    FROM request_buckets FINAL
                                    WHERE project_id = {project_id:UInt32} AND service = {service:String}
                                      AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
                                      -- every attempt queued or in flight during the window (a queue's state at the
                                      -- window's start comes from attempts queued before it)
                                      AND queued_at < {end:DateTime64(9, 'UTC')}
                                      AND coalesce(released_at, admitted_at, queued_at) >= {start:DateTime64(9, 'UTC')}
                                )
                            )
                            WINDOW w AS (PARTITION BY instance ORDER BY t, span_key, kind ROWS UNBOUNDED PRECEDING),
                                   w1 AS (PARTITION BY instance ORDER BY t, span_key, kind ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING)
                        )
                        WINDOW w AS (PARTITION BY instance ORDER BY t, span_key, kind ROWS UNBOUNDED PRECEDING)
                    )
                )
                GROUP BY GROUPING SETS ((instance, b), (tenant))
            )
            WINDOW i AS (PARTITION BY is_instance_row, instance)
        )
    )
)
GROUP BY is_instance_row, kept, instance_name, bucket_start_ms, tenant_name
ORDER BY is_instance_row DESC, is_others, instance_name, bucket_start_ms, in_flight_backlog_ms_sum DESC, tenant_name
