-- overview_five_minutes of one project over the whole hours [start, end), merged from the bucket_minutes rows
-- this refresh wrote (version {computed_at}: aggregate_bucket_minutes.sql runs first), as that version of those
-- hours' rows (store migration 0041).
INSERT INTO overview_five_minutes
SELECT project_id, service, hour, toStartOfFiveMinutes(minute) AS five_minutes, sum(attempts), sum(errors),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(ttft_ok_dd), sum(ttft_ok_count),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(total_ok_dd), sum(total_ok_count),
       {computed_at:DateTime64(3, 'UTC')}
FROM bucket_minutes
WHERE project_id = {project_id:UInt32} AND computed_at = {computed_at:DateTime64(3, 'UTC')}
  AND hour >= {start:DateTime64(9, 'UTC')} AND hour < {end:DateTime64(9, 'UTC')}
GROUP BY project_id, service, hour, five_minutes
