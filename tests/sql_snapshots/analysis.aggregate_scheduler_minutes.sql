-- Scheduler state per instance-minute and tenant-hour of every service of one project over the whole hours
-- [start, end), from request_buckets (scheduler_pieces), as version {computed_at} of those hours' rows.
INSERT INTO scheduler_minutes
SELECT project_id, service, hour, is_instance_row, instance, tenant, toDateTime(intDiv(bucket_ns, 1000000000), 'UTC'),
       last_cap, cap_at, backlog_ms, gap_ms, queue_ms, in_flight_ms, covered_ms, queue_max, in_flight_max,
       in_flight_backlog_ms, attempts, {computed_at:DateTime64(3, 'UTC')}
FROM scheduler_pieces(project_id = {project_id:UInt32}, services = [], start = {start:DateTime64(9, 'UTC')},
                      end = {end:DateTime64(9, 'UTC')}, core_start = {end:DateTime64(9, 'UTC')},
                      core_end = {end:DateTime64(9, 'UTC')}, bucket_ms = 60000)
