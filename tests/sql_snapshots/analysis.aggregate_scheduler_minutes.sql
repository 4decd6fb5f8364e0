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
SETTINGS
    optimize_aggregators_of_group_by_keys = 0,
    optimize_and_compare_chain = 0,
    optimize_arithmetic_operations_in_aggregate_functions = 0,
    optimize_extract_common_expressions = 0,
    optimize_functions_to_subcolumns = 0,
    optimize_group_by_constant_keys = 0,
    optimize_group_by_function_keys = 0,
    optimize_injective_functions_in_group_by = 0,
    optimize_injective_functions_inside_uniq = 0,
    optimize_limit_by_function_keys = 0,
    optimize_multiif_to_if = 0,
    optimize_normalize_count_variants = 0,
    optimize_or_like_chain = 0,
    optimize_redundant_functions_in_order_by = 0,
    optimize_rewrite_aggregate_function_with_if = 0,
    optimize_rewrite_array_exists_to_has = 0,
    optimize_rewrite_sum_if_to_count_if = 0,
    optimize_syntax_fuse_functions = 0,
    optimize_time_filter_with_preimage = 0,
    optimize_truncate_order_by_after_group_by_keys = 0,
    optimize_uniq_to_count = 0
