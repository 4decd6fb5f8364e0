-- bucket_distribution.sql grouped by one dimension ({dimension}: route, model, tenant or instance;
-- anything else groups everything under ''), one row per value, most requests first.
SELECT
    multiIf({dimension:String} = 'route', route, {dimension:String} = 'model', toString(model),
            {dimension:String} = 'tenant', tenant, {dimension:String} = 'instance', instance, '') AS value,
    count() AS requests,
    {{bucket_stats}}
FROM request_buckets FINAL
WHERE project_id = {project_id:UInt32} AND service = {service:String}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
  AND ({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
GROUP BY value
ORDER BY requests DESC, value
