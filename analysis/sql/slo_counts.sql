-- An SLO's requests per step of [start, end) (step i: [origin + i * step_ns, origin + (i + 1) * step_ns)): one
-- service's attempts queued in the window (on the route and tenant when given), in each hour's current rows, judged
-- against {threshold_ms} on the SLO's signal (ttft or total: analysis/reads/slo_counts.py). good: succeeded, signal under the
-- threshold; bad: failed (it never kept the promise), or the signal at or over the threshold; unmeasured: succeeded
-- with the signal NULL (a non-streaming form gives no TTFT), neither good nor bad. Steps without an attempt: no row.
-- TRICKY: one flat SELECT: the same read through a subquery took 2-3 times as long (30 days, 13M attempts).
WITH {{slo_signal}} AS value
SELECT
    intDiv(toUnixTimestamp64Nano(queued_at) - toUnixTimestamp64Nano({origin:DateTime64(9, 'UTC')}),
           {step_ns:UInt64}) AS step,
    countIf(status != 'error' AND value < {threshold_ms:Float64}) AS good,
    countIf(status = 'error' OR value >= {threshold_ms:Float64}) AS bad,
    countIf(status != 'error' AND value IS NULL) AS unmeasured
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String}
  AND {{window}} AND {{filters}}
GROUP BY step
ORDER BY step
