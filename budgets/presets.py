"""Ready-made budgets: total and stage targets in ms at a percentile."""
PRESETS = {
    # Seed text 003 ("LLM Latency In Production"; docs/dashboard-budgets-alerts.md, "Latency budgets"): its example budget for a
    # 2.5 s p95 chat turn:
    # 150 ms network and headers, 300 retrieval and ranking, 150 prompt build and policy checks,
    # 1,600 model to final token, 300 tools or post processing (sums to 2,500).
    "seed-003-2.5s": {
        "percentile": 95,
        "total_ms": 2500.0,
        "stages": {"network": 150.0, "retrieval": 300.0, "prompt_build_policy": 150.0, "model": 1600.0,
                   "tools_post": 300.0},
    },
}
