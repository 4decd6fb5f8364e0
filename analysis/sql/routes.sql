-- The routes of one service with attempts queued in [start, end) whose name contains {q} (any case; '' = every
-- route), busiest first, at most {limit} rows: the route picker. {selected} comes first wherever it ranks (and
-- whatever {q}); `matching` counts every route containing {q}, shown or not. Counted as services.sql does
-- (logical: one per attempt; the aggregated core from request_hours, the edges from request_buckets).
SELECT route AS value, sum(n) AS requests,
       {q:String} = '' OR positionCaseInsensitiveUTF8(route, {q:String}) > 0 AS hit,
       sum(toUInt64(hit)) OVER () AS matching
FROM
(
    SELECT route, requests AS n
    FROM request_hours
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND {{core_version}}
    UNION ALL
    SELECT route, count() AS n
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String} AND {{edges}}
    GROUP BY route
)
WHERE route != ''
  AND ({q:String} = '' OR positionCaseInsensitiveUTF8(route, {q:String}) > 0 OR route = {selected:String})
GROUP BY route
ORDER BY route = {selected:String} DESC, requests DESC, route
LIMIT {limit:UInt32}
