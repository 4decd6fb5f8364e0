-- The attempts a capacity read counts: those queued in [start, end), and the final attempts queued up to an hour after
-- it whose run began in it (a run is counted when it began). Used as `AND {{capacity_rows}}` after the service test.
start_at >= {start:DateTime64(9, 'UTC')} - INTERVAL 2 HOUR AND start_at < {end:DateTime64(9, 'UTC')} + INTERVAL 2 HOUR
  AND queued_at >= {start:DateTime64(9, 'UTC')} AND queued_at < {end:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR
