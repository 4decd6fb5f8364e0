-- Per time bucket of width_ms (epoch-aligned, by queued_at) over one service's attempts queued in
-- [start, end): attempts, errors, and p50/p95/p99 (exact) of TTFT and total over successful attempts.
SELECT
    intDiv(toUnixTimestamp64Milli(queued_at), {width_ms:UInt64}) * {width_ms:UInt64} AS bucket_ms,
    count() AS requests,
    countIf(status = 'error') AS errors,
    quantilesExactInclusiveIf(0.5, 0.95, 0.99)(ttft_ms, status != 'error') AS ttft_q,
    quantilesExactInclusiveIf(0.5, 0.95, 0.99)(total_ms, status != 'error') AS total_q,
    countIf(ttft_ms IS NOT NULL AND status != 'error') AS ttft_count,
    countIf(total_ms IS NOT NULL AND status != 'error') AS total_count
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String}
  AND {{window}} AND {{filters}}
GROUP BY bucket_ms
ORDER BY bucket_ms
