-- ingested_hours of each block inserted into spans: the hour of an attempt's or a stage span's queued_at (start_at
-- without one); a stage span or a retry (attempt > 1) also marks the hour 10 minutes before, where its parent or the
-- run's earlier attempt may sit (the same hours as dirty_hours.sql).
CREATE MATERIALIZED VIEW IF NOT EXISTS ingested_hours_view TO ingested_hours AS
SELECT project_id,
       arrayJoin(arrayDistinct([toStartOfHour(coalesce(queued_at, start_at)),
                                if(role = 'stage' OR attempt > 1, toStartOfHour(coalesce(queued_at, start_at) - INTERVAL 10 MINUTE),
                                   toStartOfHour(coalesce(queued_at, start_at)))])) AS hour,
       max(ingested_at) AS ingested_at
FROM spans
WHERE role IN ('attempt', 'stage')
GROUP BY project_id, hour
