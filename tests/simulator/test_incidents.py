"""Incidents in the model: parsing, scopes, and what each cause's overlay does to the attempts' buckets.

Checked on the model's own instants (tests/simulator/attempt_buckets.py), without spans or a store: an hour of
traffic simulates in about a second. Figures in comments are seed 1 / seed 2 (docs/simulator.md).
"""
import functools

import pytest

from simulator.incidents import CAUSES, IncidentSpec, check_incidents, parse_incident
from simulator.model import simulate
from simulator.scenarios import PRESETS
from tests.simulator import attempt_buckets
from tests.simulator.attempt_buckets import GROWN, MINUTE_MS, p95_between, pct, rows
from tests.simulator.model_output import model_output

START_M, LENGTH_M = 25, 15
END_M = START_M + LENGTH_M
# a slow decode needs headroom: at 5 rps it fills every slot (tests/simulator/test_incidents_diagnosed.py)
BASES = {"decode_throughput": PRESETS["healthy"].with_(rps=2.0)}
SCOPES = {"noisy_tenant": ":tenant=initech"}


@functools.lru_cache(maxsize=None)
def incident_rows(cause: str, seed: int):
    """The buckets of 50 simulated minutes with the cause on at START_M, kept for the next run while the simulator and
    these files are unchanged (tests/simulator/model_output.py)."""
    def make():
        spec = parse_incident(f"{cause}@{START_M}m+{LENGTH_M}m{SCOPES.get(cause, '')}")
        return rows(list(simulate(BASES.get(cause, PRESETS["healthy"]), 50 * 60, seed=seed, incidents=[spec])))
    return kept_rows(("incident rows", cause, seed), make)


def kept_rows(what: tuple, make):
    return model_output(what, make, attempt_buckets.__file__, __file__)


def minutes(a: float, b: float) -> tuple[float, float]:
    return a * MINUTE_MS, b * MINUTE_MS


# -- parsing ---------------------------------------------------------------------------------

def test_an_incident_parses_into_its_spec():
    assert parse_incident("network_overhead@40m+20m") == IncidentSpec("network_overhead", 2400.0, 1200.0, None)
    assert parse_incident("post_processing@90s+1h:route=/v1/chat/completions") == IncidentSpec(
        "post_processing", 90.0, 3600.0, ("route", "/v1/chat/completions"))


def test_a_scope_of_its_own_wins_over_the_common_one():
    assert parse_incident("network_overhead@1m+1m:tenant=acme", ("tenant", "globex")).scope == ("tenant", "acme")
    assert parse_incident("network_overhead@1m+1m", ("tenant", "globex")).scope == ("tenant", "globex")


@pytest.mark.parametrize("text, message", [
    ("slow_gpu@1m+1m", r"unknown incident cause 'slow_gpu': use one of queue_backlog, "),
    ("network_overhead@soon+1m", r"duration must look like 90s, 30m or 1h, got 'soon'"),
    ("network_overhead@1m+0s", r"needs a duration above 0"),
    ("network_overhead 1m", r"CAUSE@START\+DURATION\[:DIM=VALUE\]"),
    ("network_overhead@1m+1m:region=eu", r"unknown scope dimension 'region': use one of tenant, route, instance"),
    ("network_overhead@1m+1m:tenant", r"a scope looks like tenant=acme"),
    ("admission_gap@1m+1m:tenant=acme", r"admission_gap cannot be scoped by tenant \(it can by instance\)"),
    ("noisy_tenant@1m+1m", r"noisy_tenant needs a tenant scope"),
])
def test_a_bad_incident_says_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message):
        parse_incident(text)


@pytest.mark.parametrize("text, message", [
    ("network_overhead@50m+20m", r"outside the run \(0s to 3600s\)"),
    ("network_overhead@1m+1m:tenant=hooli", r"no tenant 'hooli' in this run \(it has acme, globex, initech, "),
    ("network_overhead@1m+1m:instance=llm-gateway-4", r"no instance 'llm-gateway-4'.*llm-gateway-1, llm-gateway-2"),
])
def test_an_incident_outside_the_run_or_its_traffic_is_refused(text, message):
    with pytest.raises(ValueError, match=message):
        check_incidents([parse_incident(text)], PRESETS["healthy"], 3600, "llm-gateway")


# -- each cause: (b) its bucket's p95 at least doubles, (c) from within a minute, and is gone soon after ----------

@pytest.mark.parametrize("seed", (1, 2))
@pytest.mark.parametrize("cause", CAUSES)
def test_an_incident_grows_its_bucket_from_its_start_and_goes_away_after_its_end(cause, seed):
    got, bucket = incident_rows(cause, seed), GROWN[cause]
    before = p95_between(got, bucket, *minutes(START_M - 10, START_M))
    during = p95_between(got, bucket, *minutes(START_M, END_M))
    second_minute = p95_between(got, bucket, *minutes(START_M + 1, START_M + 2))
    after = p95_between(got, bucket, *minutes(END_M + 3, END_M + 8))
    floor = 50.0  # ms: t_queue and t_retry are 0 at p95 before, so "doubled" alone would be any wait at all
    assert during >= max(2 * before, floor), (before, during)
    assert second_minute >= max(2 * before, floor), (before, second_minute)
    assert after <= max(1.3 * before, floor), (before, after)  # drained within 3 minutes


def test_the_healthy_base_does_not_move_without_an_incident():
    got = kept_rows(("healthy rows", 50, 1), lambda: rows(list(simulate(PRESETS["healthy"], 50 * 60, seed=1))))
    for bucket in set(GROWN.values()):
        before = p95_between(got, bucket, *minutes(START_M - 10, START_M))
        during = p95_between(got, bucket, *minutes(START_M, END_M))
        assert during < max(1.5 * before, 50.0), bucket


# -- scopes and combinations -------------------------------------------------------------------

def _split(spec: str, key, bucket: str, seed: int = 1, p: float = 95):
    """p-th percentile of `bucket` before and during the incident, for attempts `key` accepts and for the others."""
    runs = list(simulate(PRESETS["healthy"], 40 * 60, seed=seed, incidents=[parse_incident(spec)]))
    out = {}
    for name, keep in (("in", key), ("out", lambda r, a: not key(r, a))):
        got = rows(runs, keep)
        out[name] = tuple(pct([b[bucket] for t, b in got if lo <= t < hi], p)
                          for lo, hi in (minutes(10, 20), minutes(20, 30)))
    return out


def test_a_tenant_scoped_network_incident_slows_only_that_tenant():
    got = _split("network_overhead@20m+10m:tenant=acme", lambda r, a: r.tenant == "acme", "t_first_token")
    (in_before, in_during), (out_before, out_during) = got["in"], got["out"]
    assert in_during > 3 * in_before  # a far-region tenant: 1,330 vs 300 ms
    assert out_during < 1.3 * out_before


def test_an_instance_scoped_admission_gap_stalls_only_that_instance():
    got = _split("admission_gap@20m+10m:instance=llm-gateway-2", lambda r, a: a.instance == 1, "t_queue")
    assert got["in"][1] > 1000 and got["in"][0] == 0
    assert got["out"][1] < 50


def test_an_instance_scoped_prefill_incident_slows_only_that_instance():
    on_it = lambda r, a: a.instance == 2  # noqa: E731
    got = _split("prefill_pressure@20m+10m:instance=llm-gateway-3", on_it, "t_first_token", p=50)
    assert got["in"][1] > 2 * got["in"][0]  # median 235 vs 80 ms
    # the others' median stays; their p95 rises somewhat (~1.4x): the balancer sends them the long prompts the slow
    # instance holds on to
    assert got["out"][1] < 1.15 * got["out"][0]


def test_a_slow_retriever_on_one_route_lands_inside_its_attempts():
    route = "/v1/summarize"
    got = _split(f"preprocessing@20m+10m:route={route}", lambda r, a: r.route == route, "t_first_token")
    assert got["in"][1] > 2 * got["in"][0]
    assert got["out"][1] < 1.3 * got["out"][0]


def test_a_tenant_surge_is_that_tenants_traffic():
    spec = parse_incident("noisy_tenant@20m+10m:tenant=umbrella")
    runs = list(simulate(PRESETS["healthy"], 40 * 60, seed=1, incidents=[spec]))
    share = {w: sum(r.tenant == "umbrella" for r in runs if w[0] <= r.start / MINUTE_MS < w[1])
             / sum(1 for r in runs if w[0] <= r.start / MINUTE_MS < w[1]) for w in ((10, 20), (20, 30))}
    assert share[(10, 20)] < 0.15 < 0.25 < share[(20, 30)]  # 10% of arrivals, then 28% with its bulk surge on top


def test_two_overlapping_incidents_both_grow_their_buckets():
    specs = [parse_incident("network_overhead@15m+10m"), parse_incident("post_processing@20m+10m")]
    got = rows(list(simulate(PRESETS["healthy"], 40 * 60, seed=1, incidents=specs)))
    for bucket in ("t_first_token", "t_post"):
        before = p95_between(got, bucket, *minutes(5, 15))
        both = p95_between(got, bucket, *minutes(20, 25))
        assert both > 2 * before, bucket


def test_incidents_are_deterministic_per_seed():
    specs = [parse_incident("queue_backlog@5m+5m"), parse_incident("connection_churn@7m+5m:tenant=acme")]
    one, two = (list(simulate(PRESETS["healthy"], 15 * 60, seed=4, incidents=specs)) for _ in range(2))
    assert [(r.id, r.end, len(r.attempts)) for r in one] == [(r.id, r.end, len(r.attempts)) for r in two]


# -- steady_slow -------------------------------------------------------------------------------

@pytest.mark.parametrize("bucket", ("ttft", "t_stream", "total"))
def test_steady_slow_stays_within_a_quarter_of_itself_every_ten_minutes(bucket):
    got = kept_rows(("steady_slow rows", 60, 1),
                    lambda: rows(list(simulate(PRESETS["steady_slow"], 3600, seed=1, service="llm-70b"))))
    p95s = [p95_between(got, bucket, *minutes(m, m + 10)) for m in range(0, 60, 10)]
    middle = pct(p95s, 50)
    assert all(0.75 * middle <= p <= 1.25 * middle for p in p95s), p95s
    assert p95_between(got, "t_queue", 0, 3600 * 1000.0) == 0  # slow, not overloaded
