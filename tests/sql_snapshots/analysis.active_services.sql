-- The (project, service) pairs with attempts queued in [start, end): what the periodic diagnoses cover.
SELECT DISTINCT project_id, service
FROM request_buckets
WHERE queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
ORDER BY project_id, service
