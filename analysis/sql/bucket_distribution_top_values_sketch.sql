-- bucket_distribution_top_values.sql by route for a long window: the window's aggregated core merged from
-- bucket_hours, its edges sketched from request_buckets (analysis/rollups/aggregates.py); quantiles within the sketch's
-- 0.2 % of a value near the rank, counts and means exact. Tenants, or a tenant filter, read the exact query.
WITH per_route AS
(
    SELECT route, {{minute_columns}}
    FROM bucket_hours
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND {{core_version}}
      AND ({route:String} = '' OR route = {route:String})
    UNION ALL
    SELECT route, {{minute_states}}
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String} AND {{edges}} AND {{filters}}
    GROUP BY route
),
top_values AS (
    -- the {limit} busiest routes
    SELECT route FROM per_route GROUP BY route ORDER BY sum(attempts) DESC, route LIMIT {limit:UInt32}
)
SELECT
    s.route IN top_values AS is_top,
    if(is_top, s.route, '') AS value,
    uniqExact(s.route) AS folded,
    sum(s.attempts) AS requests,
    {{bucket_sketch_stats}}
FROM per_route AS s
GROUP BY is_top, value
ORDER BY is_top DESC, requests DESC, value
