-- How many request_buckets rows (each hour's current version: one per attempt) the project has for attempts queued in [start, end).
SELECT count()
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}}
  AND {{window}}
