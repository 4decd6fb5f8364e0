-- The hours materialized before 0018: each hour's latest rows are its current version (materialize() has always
-- rewritten whole hours: the minute job's, the freshness check's and the backfill's windows are whole hours).
INSERT INTO materialized_hours (project_id, hour, computed_at)
SELECT project_id, toStartOfHour(queued_at), max(computed_at)
FROM request_buckets
GROUP BY project_id, toStartOfHour(queued_at)
