-- Scheduler state per instance-minute and per tenant-hour of each service (docs/span-convention.md, "Scheduler
-- state over time"): the scheduler_pieces view's rows for whole hours, written by analysis/aggregates.py when
-- attempts are materialized, so the scheduler series and gap_fraction over hours or days read minutes, not a
-- sweep over every attempt. Instance rows (is_instance_row) hold one minute each; tenant rows hold the hour
-- (minute = hour): their in_flight_backlog_ms is additive over hours, not minutes (see the view).
-- TRICKY: a re-aggregated hour writes a new version (computed_at) of every row; rows whose key vanished stay
-- behind, so reads keep only each hour's version recorded in aggregated_hours, never FINAL alone.
CREATE TABLE IF NOT EXISTS scheduler_minutes
(
    project_id UInt32,
    service LowCardinality(String),
    hour DateTime('UTC'),
    is_instance_row Bool,
    instance String,
    tenant String,
    minute DateTime('UTC'),
    cap Nullable(UInt32),
    cap_at Int64,
    backlog_ms Float64,
    gap_ms Float64,
    queue_ms Float64,
    in_flight_ms Float64,
    covered_ms Float64,
    queue_max Int64,
    in_flight_max Int64,
    in_flight_backlog_ms Float64,
    attempts UInt64,
    computed_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMMDD(hour)
ORDER BY (project_id, service, hour, is_instance_row, instance, tenant, minute)
