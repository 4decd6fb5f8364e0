-- Per tenant of one service (attempts queued in [start, end)): attempts, and p95/p99
-- (quantilesExactInclusive) of total_ms, ttft_ms and t_queue_ms with the count of known values.
SELECT
    tenant,
    count() AS requests,
    quantilesExactInclusive(0.95, 0.99)(total_ms) AS total_q, count(total_ms) AS total_count,
    quantilesExactInclusive(0.95, 0.99)(ttft_ms) AS ttft_q, count(ttft_ms) AS ttft_count,
    quantilesExactInclusive(0.95, 0.99)(t_queue_ms) AS t_queue_q, count(t_queue_ms) AS t_queue_count
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} AND ({route:String} = '' OR route = {route:String})
GROUP BY tenant
ORDER BY requests DESC, tenant
