"""The stages a budget can target: code -> (request_buckets column or sum of columns, label).

The expressions are those of sql/stage_percentiles.sql, whose aliases are <code>_q / <code>_n.
A stage is NULL on a request that has no such data (e.g. no retrieval span), and is then not counted.
"""
STAGES = {
    # stage spans (the seed-003 split); a stage kind without spans under the attempt is NULL
    "network": ("network_ms", "Network and headers"),
    "retrieval": ("retrieval_ms", "Retrieval and ranking"),
    "prompt_build_policy": ("prep_ms", "Prompt build and policy (tokenize + prompt_build + policy)"),
    # "model to final token": admission (after any new connection) until the last token
    "model": ("t_first_token_ms + t_stream_ms", "Model to final token (first token + stream)"),
    "tools": ("tool_ms", "Tools"),
    "post": ("post_stage_ms", "Post-processing stage spans"),
    # seed 003 budgets "tools or post processing" as one line: NULL only when both are absent
    "tools_post": ("coalesce(tool_ms, 0) + coalesce(post_stage_ms, 0)", "Tools or post-processing"),
    # lifecycle buckets
    "queue": ("t_queue_ms", "Queue wait"),
    "connection": ("t_conn_ms", "Connection set-up"),
    "first_token": ("t_first_token_ms", "First token (prefill)"),
    "stream": ("t_stream_ms", "Stream"),
    "post_bucket": ("t_post_ms", "After last token until release"),
    "retry": ("t_retry_ms", "Retries and back-off"),
    "ttft": ("ttft_ms", "Time to first token"),
}
TOTAL = "total"
PERCENTILES = (50, 90, 95, 99)
