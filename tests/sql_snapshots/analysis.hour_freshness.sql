-- Per hour of one project from {since} to {end}: the newest attempt or stage span ingested for it and when its
-- request_buckets rows were last computed (1970 when never), with the store's clock: analysis/freshness.py
-- materializes the hours whose spans are newer than their rows before a page or the API reads them.
-- The start_at bounds (an hour wider, as the attempts view has) let both reads skip parts by the sort key.
WITH ingested AS
(
    -- hours as dirty_hours.sql assigns them: of queued_at (start_at without one); a stage span or a retry
    -- also marks the hour 10 minutes before, where its parent or the run's earlier attempt may sit
    SELECT hour, max(ingested_at) AS ingested_at
    FROM
    (
        SELECT arrayJoin(if(role = 'stage' OR attempt > 1,
                            [toStartOfHour(coalesce(queued_at, start_at)), toStartOfHour(coalesce(queued_at, start_at) - INTERVAL 10 MINUTE)],
                            [toStartOfHour(coalesce(queued_at, start_at))])) AS hour,
               ingested_at
        FROM spans
        WHERE project_id = {project_id:UInt32} AND role IN ('attempt', 'stage')
          AND start_at >= {since:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
    )
    WHERE hour >= toStartOfHour({since:DateTime64(9, 'UTC')}) AND hour < {end:DateTime64(9, 'UTC')}
    GROUP BY hour
),
computed AS
(
    -- hours as materialize() takes them: of the attempts' queued_at
    SELECT toStartOfHour(queued_at) AS hour, max(computed_at) AS computed_at
    FROM request_buckets
    WHERE project_id = {project_id:UInt32}
      AND start_at >= {since:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
      AND queued_at >= toStartOfHour({since:DateTime64(9, 'UTC')}) AND queued_at < {end:DateTime64(9, 'UTC')}
    GROUP BY hour
)
SELECT i.hour AS hour, i.ingested_at AS ingested_at, c.computed_at AS computed_at, now64(3, 'UTC') AS checked_at
FROM ingested AS i
LEFT JOIN computed AS c ON c.hour = i.hour
ORDER BY hour DESC
