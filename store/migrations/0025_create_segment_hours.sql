-- bucket_hours per prompt-length segment (bucket_distribution_by_segment.sql, for windows read from sketches:
-- analysis/aggregates.py): segment i of `edges` (the ANALYSIS_SEGMENT_EDGES a refresh ran with, in input tokens)
-- holds input_tokens in [edges[i], edges[i+1]), -1 the attempts without input_tokens. A read uses the rows of its
-- own edges only, and reads every attempt when they do not cover its window (the edges setting changed since).
CREATE TABLE IF NOT EXISTS segment_hours
(
    project_id UInt32,
    service LowCardinality(String),
    hour DateTime('UTC'),
    route String,
    edges Array(UInt32),
    segment Int32,
    attempts UInt64,
    errors UInt64,
    t_queue_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    t_queue_sum Float64,
    t_queue_count UInt64,
    t_conn_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    t_conn_sum Float64,
    t_conn_count UInt64,
    t_first_token_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    t_first_token_sum Float64,
    t_first_token_count UInt64,
    t_stream_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    t_stream_sum Float64,
    t_stream_count UInt64,
    t_post_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    t_post_sum Float64,
    t_post_count UInt64,
    t_retry_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    t_retry_sum Float64,
    t_retry_count UInt64,
    ttft_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    ttft_sum Float64,
    ttft_count UInt64,
    total_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    total_sum Float64,
    total_count UInt64,
    ttft_ok_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    ttft_ok_count UInt64,
    total_ok_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    total_ok_count UInt64,
    computed_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, service, hour, route, edges, segment)
