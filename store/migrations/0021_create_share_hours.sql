-- Per-request shares per service, route and hour of one project's successful attempts (request_shares.sql, for
-- windows read from sketches: analysis/aggregates.py): counts, and a DDSketch state (relative accuracy 0.002) of
-- each share, stage time and decode cost whose median (or p50 and p95) the diagnosis reads.
CREATE TABLE IF NOT EXISTS share_hours
(
    project_id UInt32,
    service LowCardinality(String),
    hour DateTime('UTC'),
    route String,
    shared UInt64,
    t_queue_share AggregateFunction(quantilesDD(0.002, 0.5), Float64),
    t_conn_share AggregateFunction(quantilesDD(0.002, 0.5), Float64),
    t_first_token_share AggregateFunction(quantilesDD(0.002, 0.5), Float64),
    t_stream_share AggregateFunction(quantilesDD(0.002, 0.5), Float64),
    t_post_share AggregateFunction(quantilesDD(0.002, 0.5), Float64),
    t_retry_share AggregateFunction(quantilesDD(0.002, 0.5), Float64),
    first_token_n UInt64,
    prep_n UInt64,
    prep_share AggregateFunction(quantilesDD(0.002, 0.5), Float64),
    network_n UInt64,
    network_share AggregateFunction(quantilesDD(0.002, 0.5), Float64),
    retrieval_n UInt64,
    retrieval_q AggregateFunction(quantilesDD(0.002, 0.5, 0.95), Nullable(Float64)),
    tool_n UInt64,
    tool_q AggregateFunction(quantilesDD(0.002, 0.5, 0.95), Nullable(Float64)),
    post_stage_n UInt64,
    post_stage_share AggregateFunction(quantilesDD(0.002, 0.5), Float64),
    decode_n UInt64,
    ms_per_output_token_q AggregateFunction(quantilesDD(0.002, 0.5, 0.95), Float64),
    computed_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, service, hour, route)
