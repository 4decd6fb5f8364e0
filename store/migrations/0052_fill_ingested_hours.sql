-- ingested_hours of the spans stored before 0051, over the last 50 hours: the freshness check reads at most the last
-- ANALYSIS_FRESH_HOURS (48 at most) before the current one; older hours are the minute job's alone.
INSERT INTO ingested_hours
SELECT project_id,
       arrayJoin(arrayDistinct([toStartOfHour(coalesce(queued_at, start_at)),
                                if(role = 'stage' OR attempt > 1, toStartOfHour(coalesce(queued_at, start_at) - INTERVAL 10 MINUTE),
                                   toStartOfHour(coalesce(queued_at, start_at)))])) AS hour,
       max(ingested_at) AS ingested_at
FROM spans
WHERE role IN ('attempt', 'stage') AND start_at >= now() - INTERVAL 50 HOUR
GROUP BY project_id, hour
