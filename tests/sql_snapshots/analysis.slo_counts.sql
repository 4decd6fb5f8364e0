-- An SLO's requests per step of [start, end) (step i: [origin + i * step_ns, origin + (i + 1) * step_ns)): one
-- service's attempts queued in the window (on the route and tenant when given), in each hour's current rows, judged
-- against {threshold_ms} on the SLO's signal (ttft or total: analysis/reads/slo_counts.py). good: succeeded, signal under the
-- threshold; bad: failed (it never kept the promise), or the signal at or over the threshold; unmeasured: succeeded
-- with the signal NULL (a non-streaming form gives no TTFT), neither good nor bad. Steps without an attempt: no row.
-- TRICKY: one flat SELECT: the same read through a subquery took 2-3 times as long (30 days, 13M attempts).
WITH if({signal:String} = 'ttft', ttft_ms, total_ms) AS value
SELECT
    intDiv(toUnixTimestamp64Nano(queued_at) - toUnixTimestamp64Nano({origin:DateTime64(9, 'UTC')}),
           {step_ns:UInt64}) AS step,
    countIf(status != 'error' AND value < {threshold_ms:Float64}) AS good,
    countIf(status = 'error' OR value >= {threshold_ms:Float64}) AS bad,
    countIf(status != 'error' AND value IS NULL) AS unmeasured
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
GROUP BY step
ORDER BY step
