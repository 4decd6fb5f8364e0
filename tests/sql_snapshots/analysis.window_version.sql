-- The newest materialization (materialized_hours) and the newest aggregation (aggregated_hours) among one project's
-- hours over [start, end): a read of the window (its edges from request_buckets at each hour's latest
-- materialization, its core from the aggregates at each hour's latest aggregation) can change only when one of them
-- does, so an answer kept under this pair is the answer a read would give now (analysis/reads/versions.py).
-- 1970 for a side without hours.
SELECT
    (SELECT max(computed_at) FROM materialized_hours
     WHERE project_id = {project_id:UInt32}
       AND hour >= toStartOfHour({start:DateTime64(9, 'UTC')}) AND hour < {end:DateTime64(9, 'UTC')}) AS materialized_at,
    (SELECT max(computed_at) FROM aggregated_hours
     WHERE project_id = {project_id:UInt32}
       AND hour >= toStartOfHour({start:DateTime64(9, 'UTC')}) AND hour < {end:DateTime64(9, 'UTC')}) AS aggregated_at
