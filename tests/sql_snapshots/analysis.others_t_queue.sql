-- For each tenant in {tenants}: p95 (quantileExactInclusive) of t_queue_ms over the other tenants'
-- attempts of one service queued in [start, end), and how many such values there were.
SELECT tenant_of_interest AS tenant,
       quantileExactInclusive(0.95)(t_queue_ms) AS others_t_queue_p95,
       count(t_queue_ms) AS others_count
FROM
(
    -- each attempt once per tenant of interest (a handful), then kept where it is someone else's
    SELECT tenant AS attempt_tenant, t_queue_ms, arrayJoin({tenants:Array(String)}) AS tenant_of_interest
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String}
      AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
)
WHERE attempt_tenant != tenant_of_interest
GROUP BY tenant_of_interest
ORDER BY tenant_of_interest
