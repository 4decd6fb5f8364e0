-- The scheduler rows of a window's aggregated core [core_start, core_end) (scheduler_minutes) of {services} (empty:
-- every service, as one), in buckets of {bucket_ms} ms, as scheduler_sweep.sql's window_rows hold them.
SELECT if(empty({services:Array(String)}), '', service) AS service, is_instance_row, instance, tenant, cap, cap_at,
       backlog_ms, gap_ms, queue_ms, in_flight_ms, covered_ms, queue_max, in_flight_max, in_flight_backlog_ms, attempts,
       if(is_instance_row, intDiv(toInt64(toUnixTimestamp(minute)) * 1000, {bucket_ms:UInt32}) * {bucket_ms:UInt32}, 0) AS bucket_start_ms
FROM scheduler_minutes
WHERE project_id = {project_id:UInt32} AND {{core_version}}
  AND (empty({services:Array(String)}) OR service IN {services:Array(String)})
