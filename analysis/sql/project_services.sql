-- The services of one project with attempts queued in [start, end): what an incident re-detection covers (the
-- window's aggregated core from request_hours, its edges from request_buckets).
SELECT DISTINCT service
FROM
(
    SELECT service FROM request_hours WHERE project_id = {project_id:UInt32} AND {{core_version}}
    UNION ALL
    SELECT service FROM request_buckets WHERE project_id = {project_id:UInt32} AND {{edges}}
)
ORDER BY service
