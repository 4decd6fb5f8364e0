-- bucket_distribution.sql for a long window: the window's aggregated core merged from bucket_hours, its edges
-- sketched from request_buckets (analysis/rollups/aggregates.py), so quantiles are the sketch's (within 0.2 %) and counts
-- and means exact. The route filter applies; a tenant filter reads bucket_distribution.sql.
SELECT sum(s.attempts) AS requests, {{bucket_sketch_stats}}
FROM
(
    SELECT {{minute_columns}}
    FROM bucket_hours
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND {{core_version}}
      AND ({route:String} = '' OR route = {route:String})
    UNION ALL
    SELECT {{minute_states}}
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String} AND {{edges}} AND {{filters}}
) AS s
