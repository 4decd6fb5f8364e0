-- Per project, service and minute, over every route (by_route = false, route '') and per route (by_route = true):
-- churn_windows.sql's row of the minute (attempts, new connections, retries, successful runs, exact p95 and stddev
-- of t_first_token and TTFT over successful attempts), written with the other aggregates (analysis/aggregates.py).
-- A minute lies inside one hour, so its row is final once the hour is: a window's aggregated core reads these
-- rows instead of every attempt, with the same answers (a tenant filter still reads every attempt); a p95 or stddev
-- without values is NULL, as the read of every attempt gives it. Versions as scheduler_minutes: reads keep each
-- hour's version recorded in aggregated_hours.
CREATE TABLE IF NOT EXISTS churn_minutes
(
    project_id UInt32,
    service LowCardinality(String),
    hour DateTime('UTC'),
    by_route Bool,
    route String,
    minute DateTime('UTC'),
    attempts UInt64,
    new_connections UInt64,
    connection_known UInt64,
    retries UInt64,
    successes UInt64,
    t_first_token_p95 Nullable(Float64),
    t_first_token_stddev Nullable(Float64),
    ttft_p95 Nullable(Float64),
    ttft_stddev Nullable(Float64),
    computed_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, service, by_route, route, hour, minute)
