-- overview_five_minutes of the hours aggregated before 0041, from their bucket_minutes rows at each hour's current
-- aggregate version (aggregated_hours), as analysis/sql/aggregate_overview_five_minutes.sql writes them.
INSERT INTO overview_five_minutes
SELECT project_id, service, hour, toStartOfFiveMinutes(minute) AS five_minutes, sum(attempts), sum(errors),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(ttft_ok_dd), sum(ttft_ok_count),
       quantilesDDMergeState(0.002, 0.5, 0.95, 0.99)(total_ok_dd), sum(total_ok_count),
       computed_at
FROM bucket_minutes
WHERE (project_id, hour, computed_at) IN (
    SELECT project_id, hour, max(computed_at) FROM aggregated_hours GROUP BY project_id, hour)
GROUP BY project_id, service, hour, five_minutes, computed_at
