-- The attempts of one service (and route) in a window's aggregated core: counted (request_hours) and sketched
-- (bucket_hours, which leaves out services past the 1000 busiest of a refresh): the sketches serve the window when
-- it holds analysis.queries.SKETCH_MIN_ATTEMPTS and they cover every one of them.
SELECT
    (SELECT sum(requests) FROM request_hours
     WHERE project_id = {project_id:UInt32} AND service = {service:String} AND {{core_version}}
       AND ({route:String} = '' OR route = {route:String})) AS counted,
    (SELECT sum(attempts) FROM bucket_hours
     WHERE project_id = {project_id:UInt32} AND service = {service:String} AND {{core_version}}
       AND ({route:String} = '' OR route = {route:String})) AS sketched
