-- The services of one project with attempts started in [start, end) whose name contains {q} (any case; '' = every
-- service), busiest first, at most {limit} rows: the service picker. {selected} comes first wherever it ranks (and
-- whatever {q}), so the picker can always show it; `matching` counts every service containing {q}, shown or not.
-- Counted by start_at (what the sort key holds), not queued_at, and without FINAL: a picker's counts are a
-- hint, and this reads only the key columns, so every page stays fast over a day of a busy project.
SELECT service AS value, count() AS requests,
       {q:String} = '' OR positionCaseInsensitiveUTF8(service, {q:String}) > 0 AS hit,
       sum(toUInt64(hit)) OVER () AS matching
FROM request_buckets
WHERE project_id = {project_id:UInt32}
  AND start_at >= {start:DateTime64(9, 'UTC')} AND start_at < {end:DateTime64(9, 'UTC')}
  AND ({q:String} = '' OR positionCaseInsensitiveUTF8(service, {q:String}) > 0 OR service = {selected:String})
GROUP BY service
ORDER BY service = {selected:String} DESC, requests DESC, service
LIMIT {limit:UInt32}
