-- The rows of an aggregate table (scheduler_minutes, request_hours) in the window's aggregated core
-- [core_start, core_end), in each hour's current version (analysis/rollups/aggregates.py). Used as `AND {{core_version}}`.
hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
  AND (hour, computed_at) IN (
      SELECT hour, max(computed_at) FROM aggregated_hours
      WHERE project_id = {project_id:UInt32} AND hour >= {core_start:DateTime64(9, 'UTC')} AND hour < {core_end:DateTime64(9, 'UTC')}
      GROUP BY hour)
