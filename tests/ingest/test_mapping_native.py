"""The native form: lifecycle events give the instants; buckets as docs/span-convention.md defines them."""
from tests import factories as f
from tests.helpers import attempts


def test_native_events_give_the_five_buckets(alpha, ingest):
    project, key = alpha
    ingest(key, f.request(f.attempt(t_queue_ms=20, t_first_token_ms=300, t_stream_ms=900, t_post_ms=15)))
    [row] = attempts(project.id)
    # reused connection: t_conn 0; one attempt: t_retry 0; total = 20 + 300 + 900 + 15
    assert (row["t_queue_ms"], row["t_conn_ms"], row["t_first_token_ms"]) == (20, 0, 300)
    assert (row["t_stream_ms"], row["t_post_ms"], row["t_retry_ms"], row["total_ms"]) == (900, 15, 0, 1235)
    assert (row["tenant"], row["route"], row["service"], row["instance"]) == ("alice", "/v1/chat/completions", "llm-gateway", "gw-1")
    assert (row["role"], row["form"], row["input_tokens"], row["output_tokens"]) == ("attempt", "native", 800, 200)
