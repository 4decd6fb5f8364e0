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
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
GROUP BY bucket_ms
ORDER BY bucket_ms
