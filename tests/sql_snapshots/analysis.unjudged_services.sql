-- The services of one project with attempts queued in [start, end) whose spans were ingested after the incidents
-- step's watermark {since} (not queued for judging yet), with the first such minute: what the Incidents page adds to
-- the queue (JudgeWork) to say which services are not judged yet. The start_at bounds skip parts by the sort key.
SELECT service, toStartOfMinute(min(coalesce(queued_at, start_at))) AS first
FROM spans
WHERE project_id = {project_id:UInt32} AND role = 'attempt' AND ingested_at > {since:DateTime64(3, 'UTC')}
  AND start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND coalesce(queued_at, start_at) >= {start:DateTime64(9, 'UTC')}
  AND coalesce(queued_at, start_at) < {end:DateTime64(9, 'UTC')}
GROUP BY service
ORDER BY service
