-- The services of one project with attempts queued in [start, end): what an incident re-detection covers.
SELECT DISTINCT service
FROM request_buckets
WHERE project_id = {project_id:UInt32}
  AND {{window}}
ORDER BY service
