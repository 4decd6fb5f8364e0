-- The services of one project with attempts queued in [start, end) whose name contains {q} (any case; '' = every
-- service), busiest first, at most {limit} rows: the service picker. {selected} comes first wherever it ranks (and
-- whatever {q}), so the picker can always show it; `matching` counts every service containing {q}, shown or not.
-- requests is logical: one per attempt, however many copies re-sends and re-materializations left unmerged
-- (each hour's latest materialization holds one row per attempt, as the diagnosis counts them), over the same
-- window as every other count of the pages and the diagnosis: the window's aggregated core from request_hours,
-- its edges from request_buckets (analysis/rollups/aggregates.py).
SELECT service AS value, sum(n) AS requests,
       {q:String} = '' OR positionCaseInsensitiveUTF8(service, {q:String}) > 0 AS hit,
       sum(toUInt64(hit)) OVER () AS matching
FROM
(
    SELECT service, requests AS n
    FROM request_hours
    WHERE project_id = {project_id:UInt32} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
  AND (hour, computed_at) IN (
      SELECT hour, max(computed_at) FROM aggregated_hours
      WHERE project_id = {project_id:UInt32} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
      GROUP BY hour)
    UNION ALL
    SELECT service, count() AS n
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND ((start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {core_start:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {core_start:DateTime64(9, 'UTC')})
 OR (start_at >= {core_end:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {core_end:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}))
    GROUP BY service
)
WHERE {q:String} = '' OR positionCaseInsensitiveUTF8(service, {q:String}) > 0 OR service = {selected:String}
GROUP BY service
ORDER BY service = {selected:String} DESC, requests DESC, service
LIMIT {limit:UInt32}
