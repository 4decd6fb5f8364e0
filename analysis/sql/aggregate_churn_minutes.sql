-- churn_minutes of one project over the whole hours [start, end), from request_buckets, as version {computed_at} of
-- those hours' rows (store migration 0039): one pass, a row per service and minute (by_route = false: every route
-- together) and per service, route and minute (grouping(route) is 1 where the grouping set leaves route out).
INSERT INTO churn_minutes
SELECT project_id, service, toStartOfHour(minute) AS hour, grouping(route) = 0 AS by_route, route,
       toStartOfMinute(queued_at) AS minute, {{churn_columns}},
       {computed_at:DateTime64(3, 'UTC')}
FROM request_buckets
WHERE project_id = {project_id:UInt32} AND {{current}}
  AND {{window}}
GROUP BY GROUPING SETS ((project_id, service, minute), (project_id, service, route, minute))
