"""The mapping of known engines: one module, and the docs' table (docs/sending-traces.md) says the same."""
import re
from pathlib import Path

from analysis import engines

DOC = Path(__file__).resolve().parents[2] / "docs" / "sending-traces.md"


def test_every_metric_name_of_the_module_is_in_the_readme_table_and_back():
    text = DOC.read_text()
    table = text[text.index("#### Engine metrics"):text.index("### 8. Logs")]
    in_readme = set(re.findall(r"`([A-Za-z_:]+)`", "\n".join(l for l in table.splitlines() if l.startswith("| "))))
    in_module = {s.name for sources in engines.SIGNALS.values() for s in sources}
    assert in_readme == in_module


def test_names_match_as_exposed_and_as_sdk_instruments_spell_them():
    assert engines.source_of("vllm:kv_cache_usage_perc")[0] == "kv_cache_usage"
    assert engines.source_of("vllm.kv_cache_usage_perc")[0] == "kv_cache_usage"
    assert engines.source_of("vllm:gpu_cache_usage_perc")[0] == "kv_cache_usage"  # v0
    assert engines.source_of("vllm:num_preemptions")[1].read == engines.COUNTER  # _total dropped by a receiver
    assert engines.source_of("DCGM_FI_DEV_GPU_UTIL")[1].scale == 0.01
    assert engines.source_of("http_requests_total") is None


def test_engines_are_recognised_from_names():
    assert engines.engines(["sglang:token_usage", "DCGM_FI_DEV_FB_FREE", "unrelated"]) == ("sglang", "dcgm")
