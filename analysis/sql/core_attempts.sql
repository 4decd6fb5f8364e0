-- The attempts of one service (and route) in a window's aggregated core, from request_hours: whether its
-- distributions are worth reading from sketches (analysis.queries.SKETCH_MIN_ATTEMPTS).
SELECT sum(requests)
FROM request_hours
WHERE project_id = {project_id:UInt32} AND service = {service:String} AND {{core_version}}
  AND ({route:String} = '' OR route = {route:String})
