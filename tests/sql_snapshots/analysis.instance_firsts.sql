-- The first attempt of each instance of one service, looking back an hour before the window [start, end):
-- analysis/reads/queries.py instance_starts() tells from them which instances started while the service was serving.
SELECT instance, min(start_at) AS first_at
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND service = {service:String}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')}
GROUP BY instance
