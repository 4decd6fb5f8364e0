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
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
  AND (hour, computed_at) IN (
      SELECT hour, max(computed_at) FROM aggregated_hours
      WHERE project_id = {project_id:UInt32} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
      GROUP BY hour)
    UNION ALL
    SELECT tenant, quantilesDDState(0.002, 0.5, 0.95, 0.99)(t_queue_ms) AS t_queue_dd, count(t_queue_ms) AS t_queue_count
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String} AND ((start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {core_start:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {core_start:DateTime64(9, 'UTC')})
 OR (start_at >= {core_end:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {core_end:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}))
    GROUP BY tenant
) AS s
ARRAY JOIN {tenants:Array(String)} AS wanted
GROUP BY wanted
ORDER BY wanted
