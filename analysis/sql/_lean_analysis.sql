-- Settings for a statement whose query tree is large (the scheduler sweep of a window's edges, and the hourly
-- aggregate of the same scheduler_pieces view: aggregate_scheduler_minutes.sql).
-- ClickHouse's analyzer runs each of these rewrite passes over the whole query tree; on the sweep's tree (the
-- scheduler_pieces view's arrays and lambdas under the ranking) together they cost more than reading the edges:
-- scheduler_sweep.sql over one service's 24 h ending at :37 (10M-span bench data, one read at a time),
-- QueryAnalysisMicroseconds 273-283 -> 160-171 ms, the whole read 312-343 -> 230-232 ms. Each pass only rewrites
-- an expression into an equivalent one (none of them applies to the sweep's), so the rows are the same with them
-- off; the passes that choose how data is read (PREWHERE, reading in order, projections) stay on. All of them exist
-- in ClickHouse 25.9, the oldest server this project supports.
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
