-- runs_top.sql for a bucket sort ({bucket}): every attempt queued in [start, end) under runs_search's filters,
-- the top {rows} rows by that bucket's value, as (service, run id); analysis/reads/runs.py keeps each run's first, its
-- largest value. The bucket is read from every attempt of a run, so these are separate from runs_top.sql, which
-- reads final attempts and fewer columns.
-- TRICKY: a non-final attempt does not know its run's final status, so it passes the status filter here;
-- runs_search applies it (ask for more candidates then).
SELECT service, run_id
FROM request_buckets
{{runs_top_filters}}
ORDER BY {{bucket_value}} DESC NULLS LAST, run_id
LIMIT {rows:UInt32}