-- Tenant tails' sketches per service, hour, route and tenant of one project over the whole hours [start, end),
-- from request_buckets, as version {computed_at} of those hours' rows (store migration 0017).
INSERT INTO tenant_hours
SELECT project_id, service, toStartOfHour(queued_at) AS hour, route, tenant,
       count() AS attempts,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(total_ms) AS total_dd, count(total_ms) AS total_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(ttft_ms) AS ttft_dd, count(ttft_ms) AS ttft_count,
quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_queue_ms) AS t_queue_dd, count(t_queue_ms) AS t_queue_count,
       {computed_at:DateTime64(3, 'UTC')}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour)
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
  AND service IN (
    SELECT service FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
    GROUP BY service ORDER BY count() DESC, service LIMIT 1000)
GROUP BY project_id, service, hour, route, tenant
