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
    WHERE project_id = {project_id:UInt32} AND {{core_version}}
    UNION ALL
    SELECT service, count() AS n
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND {{current}} AND {{edges}}
    GROUP BY service
)
WHERE {q:String} = '' OR positionCaseInsensitiveUTF8(service, {q:String}) > 0 OR service = {selected:String}
GROUP BY service
ORDER BY service = {selected:String} DESC, requests DESC, service
LIMIT {limit:UInt32}
