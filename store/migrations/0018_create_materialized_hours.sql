-- One row per (project, hour) each time analysis/materialize.py rewrites that hour's request_buckets rows, written
-- after them: reads keep the rows of each hour's latest version (analysis/sql/_current.sql) instead of reading
-- FINAL, which merges the sort key (trace and span ids) of every row it reads.
CREATE TABLE IF NOT EXISTS materialized_hours
(
    project_id UInt32,
    hour DateTime64(3, 'UTC'),
    computed_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, hour)
