-- Attempts per project, service, route and hour of queued_at (logical: one per span id), written with
-- scheduler_minutes when attempts are materialized: the service and route pickers and the lists of active
-- services count these for the whole hours of a window instead of every attempt. Versions as scheduler_minutes.
CREATE TABLE IF NOT EXISTS request_hours
(
    project_id UInt32,
    service LowCardinality(String),
    route String,
    hour DateTime('UTC'),
    requests UInt64,
    computed_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, hour, service, route)
