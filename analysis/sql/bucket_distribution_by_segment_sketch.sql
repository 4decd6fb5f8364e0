-- bucket_distribution_by_segment.sql for a long window: the window's aggregated core merged from segment_hours (the
-- rows cut at {edges}), its edges sketched from request_buckets (analysis/rollups/aggregates.py), so quantiles are the
-- sketch's (within 0.2 % of a value near the rank) and counts and means exact. The route filter applies.
SELECT s.segment AS segment, sum(s.attempts) AS requests, {{bucket_sketch_stats}}
FROM
(
    SELECT segment, {{minute_columns}}
    FROM segment_hours
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND {{core_version}}
      AND edges = {edges:Array(UInt32)} AND ({route:String} = '' OR route = {route:String})
    UNION ALL
    SELECT {{segment}} AS segment, {{minute_states}}
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String} AND {{edges}} AND {{filters}}
    GROUP BY segment
) AS s
GROUP BY segment
ORDER BY segment
