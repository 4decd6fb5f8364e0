-- The services of one project with attempts queued in [start, end) whose name contains {q} (any case; '' = every
-- service), busiest first, at most {limit} rows: the service picker. {selected} comes first wherever it ranks (and
-- whatever {q}), so the picker can always show it; `matching` counts every service containing {q}, shown or not.
-- requests is logical: one per (trace_id, span_id), however many copies re-sends and re-materializations left
-- unmerged (cheaper than FINAL, which must also read and merge on the version column), over the same window
-- as every other count of the pages and the diagnosis (the window fragment: by queued_at).
SELECT service AS value, uniqExact(trace_id, span_id) AS requests,
       {q:String} = '' OR positionCaseInsensitiveUTF8(service, {q:String}) > 0 AS hit,
       sum(toUInt64(hit)) OVER () AS matching
FROM request_buckets
WHERE project_id = {project_id:UInt32}
  AND {{window}}
  AND ({q:String} = '' OR positionCaseInsensitiveUTF8(service, {q:String}) > 0 OR service = {selected:String})
GROUP BY service
ORDER BY service = {selected:String} DESC, requests DESC, service
LIMIT {limit:UInt32}
