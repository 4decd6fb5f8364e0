-- The attempts of one service (and route) in a window's aggregated core: counted (request_hours), sketched
-- (bucket_hours, which leaves out services past the 1000 busiest of a refresh) and segmented (segment_hours cut at
-- {edges}, the configured ANALYSIS_SEGMENT_EDGES): the sketches serve the window when it holds
-- analysis.scope.SKETCH_MIN_ATTEMPTS and they cover every one of them. One pass with one version test
-- (a version test per table: 30 ms for a 24 h core; one: 22 ms).
SELECT sumIf(n, kind = 0) AS counted, sumIf(n, kind = 1) AS sketched, sumIf(n, kind = 2) AS segmented
FROM
(
    SELECT 0 AS kind, requests AS n, hour, computed_at
    FROM request_hours
    WHERE project_id = {project_id:UInt32} AND service = {service:String}
      AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
      AND ({route:String} = '' OR route = {route:String})
    UNION ALL
    SELECT 1, attempts, hour, computed_at
    FROM bucket_hours
    WHERE project_id = {project_id:UInt32} AND service = {service:String}
      AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
      AND ({route:String} = '' OR route = {route:String})
    UNION ALL
    SELECT 2, attempts, hour, computed_at
    FROM segment_hours
    WHERE project_id = {project_id:UInt32} AND service = {service:String}
      AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
      AND edges = {edges:Array(UInt32)} AND ({route:String} = '' OR route = {route:String})
)
WHERE {{core_version}}
