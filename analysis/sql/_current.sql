-- The rows of each hour's latest materialization only (analysis/rollups/materialize.py records its version in
-- materialized_hours after writing the rows): a read keeps one row per attempt without FINAL, which merged the
-- sort key (trace and span ids) of every row it read, and never sees half of a run in progress.
-- Used as `AND {{current}}` after the project test.
(toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour)
