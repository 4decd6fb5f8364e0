-- incident_series.sql of one whole service and of each of its routes in one pass over its attempts queued in
-- [start, end): whole = 1 on the service's rows (route ''), 0 on a route's. Incident detection judges the service
-- and its routes every minute: one read instead of one per route.
SELECT
    toStartOfMinute(queued_at) AS minute,
    route,
    grouping(route) AS whole,
    {{incident_series_columns}}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}} AND service = {service:String} AND {{window}}
GROUP BY GROUPING SETS ((minute), (route, minute))
ORDER BY whole DESC, route, minute
