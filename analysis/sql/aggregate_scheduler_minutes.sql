-- Scheduler state per instance-minute and tenant-hour of every service of one project over the whole hours
-- [start, end), from request_buckets (scheduler_pieces), as version {computed_at} of those hours' rows.
-- Without the analyzer's expression-rewrite passes (_lean_analysis.sql), as the sweeps over the same view: planning is
-- most of an hour's statement (an empty hour 122 ms, 300 attempts 128 ms, chDB 26.9), and the passes a quarter of it
-- (300 attempts 133 -> 96 ms; 100,000 attempts 371-384 -> 283-284 ms; the same rows).
INSERT INTO scheduler_minutes
SELECT project_id, service, hour, is_instance_row, instance, tenant, toDateTime(intDiv(bucket_ns, 1000000000), 'UTC'),
       last_cap, cap_at, backlog_ms, gap_ms, queue_ms, in_flight_ms, covered_ms, queue_max, in_flight_max,
       in_flight_backlog_ms, attempts, {computed_at:DateTime64(3, 'UTC')}
FROM scheduler_pieces(project_id = {project_id:UInt32}, services = [], start = {start:DateTime64(9, 'UTC')},
                      end = {end:DateTime64(9, 'UTC')}, core_start = {end:DateTime64(9, 'UTC')},
                      core_end = {end:DateTime64(9, 'UTC')}, bucket_ms = 60000)
{{lean_analysis}}
