-- scheduler_pieces's columns as scheduler_sweep.sql groups them (cap, bucket_start_ms in ms): the same for both edges.
is_instance_row, instance, tenant, last_cap AS cap, cap_at, backlog_ms, gap_ms, queue_ms, in_flight_ms,
                           covered_ms, queue_max, in_flight_max, in_flight_backlog_ms, attempts,
                           if(is_instance_row, intDiv(bucket_ns, 1000000), 0) AS bucket_start_ms
