-- The routes of one service with attempts started in [start, end), for the route picker (at most 1000).
SELECT DISTINCT route
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND service = {service:String}
  AND start_at >= {start:DateTime64(9, 'UTC')} AND start_at < {end:DateTime64(9, 'UTC')} AND route != ''
ORDER BY route
LIMIT 1000
