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
    WHERE project_id = {project_id:UInt32} AND service = {service:String} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
  AND (hour, computed_at) IN (
      SELECT hour, max(computed_at) FROM aggregated_hours
      WHERE project_id = {project_id:UInt32} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
      GROUP BY hour)
    UNION ALL
    SELECT route, count() AS n
    FROM request_buckets
    WHERE project_id = {project_id:UInt32} AND (toStartOfHour(queued_at), computed_at) IN (
    SELECT hour, max(computed_at) FROM materialized_hours WHERE project_id = {project_id:UInt32} GROUP BY hour) AND service = {service:String} AND ((start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {core_start:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {core_start:DateTime64(9, 'UTC')})
 OR (start_at >= {core_end:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {core_end:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}))
    GROUP BY route
)
WHERE route != ''
  AND ({q:String} = '' OR positionCaseInsensitiveUTF8(route, {q:String}) > 0 OR route = {selected:String})
GROUP BY route
ORDER BY route = {selected:String} DESC, requests DESC, route
LIMIT {limit:UInt32}
