-- Per hour of one project from {since} to {end}: the newest attempt or stage span ingested for it and when the hour
-- was last materialized (1970 when never), with the store's clock: analysis/rollups/freshness.py materializes the hours whose
-- spans are newer than their rows before a page or the API reads them.
-- Both sides read a row or a few per hour (ingested_hours, filled on every INSERT into spans; materialized_hours,
-- marked by every materialization), not the hours' spans and request_buckets rows: this runs before every page.
WITH ingested AS
(
    -- hours as dirty_hours.sql assigns them (store/migrations/0051_create_ingested_hours_view.sql)
    SELECT hour, max(ingested_at) AS ingested_at
    FROM ingested_hours
    WHERE project_id = {project_id:UInt32}
      AND hour >= toStartOfHour({since:DateTime64(9, 'UTC')}) AND hour < {end:DateTime64(9, 'UTC')}
    GROUP BY hour
),
computed AS
(
    -- hours as materialize() takes them (of the attempts' queued_at), marked once their rows are written
    SELECT toDateTime(hour, 'UTC') AS hour, max(computed_at) AS computed_at
    FROM materialized_hours
    WHERE project_id = {project_id:UInt32}
      AND hour >= toStartOfHour({since:DateTime64(9, 'UTC')}) AND hour < {end:DateTime64(9, 'UTC')}
    GROUP BY hour
)
SELECT i.hour AS hour, i.ingested_at AS ingested_at, c.computed_at AS computed_at, now64(3, 'UTC') AS checked_at
FROM ingested AS i
LEFT JOIN computed AS c ON c.hour = i.hour
ORDER BY hour DESC
