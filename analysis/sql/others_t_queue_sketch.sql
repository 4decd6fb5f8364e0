-- others_t_queue.sql for a long window: for each tenant in {tenants}, the other tenants' t_queue sketches merged,
-- over the window's aggregated core (tenant_service_hours) and its edges sketched from request_buckets
-- (analysis/rollups/aggregates.py). The p95 within the sketch's 0.2 % of a value near the rank, counts exact.
SELECT wanted AS tenant,
       quantilesDDMergeIf(0.002, 0.5, 0.95, 0.99)(s.t_queue_dd, s.tenant != wanted)[2] AS others_t_queue_p95,
       sumIf(s.t_queue_count, s.tenant != wanted) AS others_count
FROM
(
    SELECT tenant, t_queue_dd, t_queue_count
    FROM tenant_service_hours
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND {{core_version}}
    UNION ALL
    SELECT tenant, quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_queue_ms) AS t_queue_dd, count(t_queue_ms) AS t_queue_count
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String} AND {{edges}}
    GROUP BY tenant
) AS s
ARRAY JOIN {tenants:Array(String)} AS wanted
GROUP BY wanted
ORDER BY wanted
