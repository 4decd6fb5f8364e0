-- The services of one project with attempts queued in [start, end), busiest first, with their routes.
SELECT service, count() AS requests, arraySort(groupUniqArray(1000)(route)) AS routes
FROM request_buckets FINAL
WHERE project_id = {project_id:UInt32}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
GROUP BY service
ORDER BY requests DESC, service
