-- The hours in [start, end) of one project whose aggregates exist (any version).
SELECT DISTINCT hour
FROM aggregated_hours
WHERE project_id = {project_id:UInt32} AND hour >= {start:DateTime64(9, 'UTC')} AND hour < {end:DateTime64(9, 'UTC')}
ORDER BY hour
