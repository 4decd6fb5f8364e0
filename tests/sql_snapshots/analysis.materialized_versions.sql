-- When each of one project's hours in [start, end) was last materialized (the version reads keep, _current.sql): the
-- incidents step judges a service's queued minutes once every hour they read was materialized after the service's
-- spans arrived, even while other services' spans keep the hour queued for materializing again.
SELECT hour, max(computed_at) AS computed_at
FROM materialized_hours
WHERE project_id = {project_id:UInt32} AND hour >= {start:DateTime64(3, 'UTC')} AND hour < {end:DateTime64(3, 'UTC')}
GROUP BY hour
