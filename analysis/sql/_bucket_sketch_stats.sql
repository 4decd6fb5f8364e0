-- _bucket_stats.sql's columns (per bucket <name>_q [p50, p95, p99], _mean, _count) merged from sketch rows
-- (_minute_states.sql) of a subquery named s (qualified: the output names repeat the inputs'): quantiles within
-- the sketch's 0.2 %, means and counts exact.
quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(s.t_queue_dd) AS t_queue_q, sum(s.t_queue_sum) / sum(s.t_queue_count) AS t_queue_mean, sum(s.t_queue_count) AS t_queue_count,
quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(s.t_conn_dd) AS t_conn_q, sum(s.t_conn_sum) / sum(s.t_conn_count) AS t_conn_mean, sum(s.t_conn_count) AS t_conn_count,
quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(s.t_first_token_dd) AS t_first_token_q, sum(s.t_first_token_sum) / sum(s.t_first_token_count) AS t_first_token_mean, sum(s.t_first_token_count) AS t_first_token_count,
quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(s.t_stream_dd) AS t_stream_q, sum(s.t_stream_sum) / sum(s.t_stream_count) AS t_stream_mean, sum(s.t_stream_count) AS t_stream_count,
quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(s.t_post_dd) AS t_post_q, sum(s.t_post_sum) / sum(s.t_post_count) AS t_post_mean, sum(s.t_post_count) AS t_post_count,
quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(s.t_retry_dd) AS t_retry_q, sum(s.t_retry_sum) / sum(s.t_retry_count) AS t_retry_mean, sum(s.t_retry_count) AS t_retry_count,
quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(s.ttft_dd) AS ttft_q, sum(s.ttft_sum) / sum(s.ttft_count) AS ttft_mean, sum(s.ttft_count) AS ttft_count,
quantilesDDMerge(0.002, 0.5, 0.95, 0.99)(s.total_dd) AS total_q, sum(s.total_sum) / sum(s.total_count) AS total_mean, sum(s.total_count) AS total_count
