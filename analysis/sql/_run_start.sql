-- When the run of a final attempt began: its queued_at less t_retry (the final attempt's start less the first's; 0 for
-- a run of one attempt, NULL when the run is unknowable, then the attempt's own). A run is counted when it began.
fromUnixTimestamp64Nano(toUnixTimestamp64Nano(queued_at) - toInt64(coalesce(t_retry_ms, 0) * 1000000), 'UTC')
