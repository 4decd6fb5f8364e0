-- tenant_service_hours of the hours aggregated before 0027, from their current tenant_hours rows (the version
-- aggregated_hours records), as analysis/sql/aggregate_tenant_service_hours.sql writes them.
INSERT INTO tenant_service_hours
SELECT project_id, service, hour, tenant, sum(attempts),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(total_dd), sum(total_count),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(ttft_dd), sum(ttft_count),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(t_queue_dd), sum(t_queue_count),
       computed_at
FROM tenant_hours
WHERE (project_id, hour, computed_at) IN (
    SELECT project_id, hour, max(computed_at) FROM aggregated_hours GROUP BY project_id, hour)
GROUP BY project_id, service, hour, tenant, computed_at
