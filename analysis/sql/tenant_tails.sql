-- Per tenant of one service (attempts queued in [start, end)): attempts, and p95/p99
-- (quantilesExactInclusive) of total_ms, ttft_ms and t_queue_ms with the count of known values.
SELECT
    tenant,
    count() AS requests,
    {{tail_stats}}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String}
  AND {{window}} AND ({route:String} = '' OR route = {route:String})
GROUP BY tenant
ORDER BY requests DESC, tenant
