-- The attempts queued in [start, end). The start_at bounds (an hour wider) only let a read skip parts:
-- request_buckets is ordered by the hour of start_at. Used as `AND {{window}}` after the project/service test.
start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')}
