-- The attempts of one service (and route) in a window's aggregated core: counted (request_hours), sketched
-- (bucket_hours, which leaves out services past the 1000 busiest of a refresh) and segmented (segment_hours cut at
-- {edges}, the configured ANALYSIS_SEGMENT_EDGES): the sketches serve the window when it holds
-- analysis.queries.SKETCH_MIN_ATTEMPTS and they cover every one of them.
SELECT
    (SELECT sum(requests) FROM request_hours
     WHERE project_id = {project_id:UInt32} AND service = {service:String} AND {{core_version}}
       AND ({route:String} = '' OR route = {route:String})) AS counted,
    (SELECT sum(attempts) FROM bucket_hours
     WHERE project_id = {project_id:UInt32} AND service = {service:String} AND {{core_version}}
       AND ({route:String} = '' OR route = {route:String})) AS sketched,
    (SELECT sum(attempts) FROM segment_hours
     WHERE project_id = {project_id:UInt32} AND service = {service:String} AND {{core_version}}
       AND edges = {edges:Array(UInt32)} AND ({route:String} = '' OR route = {route:String})) AS segmented
