-- tenant_hours summed over routes, per service, hour and tenant of one project over the whole hours [start, end),
-- from the tenant_hours rows of version {computed_at} just written (cheaper than sketching request_buckets again),
-- as the same version of those hours' rows (store migration 0027).
INSERT INTO tenant_service_hours
SELECT project_id, service, hour, tenant, sum(attempts),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(total_dd), sum(total_count),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(ttft_dd), sum(ttft_count),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(t_queue_dd), sum(t_queue_count),
       {computed_at:DateTime64(3, 'UTC')}
FROM tenant_hours
WHERE project_id = {project_id:UInt32} AND hour >= {start:DateTime64(9, 'UTC')} AND hour < {end:DateTime64(9, 'UTC')}
  AND computed_at = {computed_at:DateTime64(3, 'UTC')}
GROUP BY project_id, service, hour, tenant
