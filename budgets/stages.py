"""The stages a budget can target: code -> label.

analysis/sql/stage_percentiles.sql measures each as <code>_q / <code>_n (the column or sum of columns is there).
A stage is NULL on a request that has no such data (e.g. no retrieval span), and is then not counted.
"""
from analysis.panels.budgets import PERCENTILES  # re-exported: the percentiles a budget may use

__all__ = ["PERCENTILES", "STAGES", "TOTAL"]

STAGES = {
    # stage spans (the seed-003 split); a stage kind without spans under the attempt is NULL
    "network": "Network and headers",
    "retrieval": "Retrieval and ranking",
    "prompt_build_policy": "Prompt build and policy (tokenize + prompt_build + policy)",
    # "model to final token": admission (after any new connection) until the last token
    "model": "Model to final token (first token + stream)",
    "tools": "Tools",
    "post": "Post-processing stage spans",
    # seed 003 budgets "tools or post processing" as one line: NULL only when both are absent
    "tools_post": "Tools or post-processing",
    # lifecycle buckets
    "queue": "Queue wait",
    "connection": "Connection set-up",
    "first_token": "First token (prefill)",
    "stream": "Stream",
    "post_bucket": "After last token until release",
    "retry": "Retries and back-off",
    "ttft": "Time to first token",
}
TOTAL = "total"
