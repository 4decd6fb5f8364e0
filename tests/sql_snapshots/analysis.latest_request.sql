-- When the project's latest stored attempt was queued (the epoch when it has none).
SELECT max(queued_at) AS latest FROM request_buckets WHERE project_id = {project_id:UInt32}
