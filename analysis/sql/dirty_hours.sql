-- (project_id, hour) pairs whose request_buckets rows are stale: hours of queued_at (start_at for
-- spans without one) of the spans ingested at or after {since}.
-- A stage span or a retry (attempt > 1) also marks the hour 10 minutes before it: its parent or the
-- run's earlier attempt may sit just across the hour boundary, and their rows change with it.
SELECT DISTINCT project_id, hour
FROM
(
    SELECT project_id,
           arrayJoin(if(role = 'stage' OR attempt > 1,
                        [toStartOfHour(coalesce(queued_at, start_at)), toStartOfHour(coalesce(queued_at, start_at) - INTERVAL 10 MINUTE)],
                        [toStartOfHour(coalesce(queued_at, start_at))])) AS hour
    FROM spans
    WHERE ingested_at >= {since:DateTime64(3, 'UTC')} AND role IN ('attempt', 'stage')
)
ORDER BY project_id, hour
