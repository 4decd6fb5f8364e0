"""Cardinality guards: past a project's distinct services, routes, tenants or instances per hour, spans are
stored with `__other__`, said in partial_success and counted on the ingest status; other projects go on.

The tracker runs on a fake clock (ingest.cardinality.Tracker takes one), so the next hour is exact.
"""
from collections import Counter
from functools import partial

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from ingest import cardinality, limits
from ingest.decode import decode_protobuf
from ingest.otlp_proto import LenientRequest
from tests import factories as f
from tests.helpers import spans
from tests.ingest.test_bad_input import JSON, answer, post

OTHER = "__other__"


class Clock:
    def __init__(self):
        self.now = 1_767_607_200.0  # 2026-01-05 10:00 UTC, the start of an hour

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    """A fresh tracker on a fake clock, and fresh limits (no cached rows of earlier tests)."""
    fake = Clock()
    monkeypatch.setattr(cardinality, "tracker", cardinality.Tracker(clock=fake))
    monkeypatch.setattr(limits, "state", limits.State())
    return fake


def services(*names: str) -> ExportTraceServiceRequest:
    """One request with one resource (service) per name, each holding one attempt."""
    req = ExportTraceServiceRequest()
    for name in names:
        req.resource_spans.extend(f.request(f.attempt(), service=name).resource_spans)
    return req


def stored(project, column: str) -> list[str]:
    from ingest.pipeline import get_writer

    get_writer().flush(force=True)
    return [r[column] for r in spans(project.id, column)]


def message(response) -> tuple[int, str]:
    result = answer(response)
    return result.partial_success.rejected_spans, result.partial_success.error_message


def status(client, key) -> dict:
    return client.get("/api/v1/ingest/status", HTTP_AUTHORIZATION=f"Bearer {key}").json()["cardinality"]


def test_services_past_the_projects_limit_are_stored_as_other_and_said_and_counted(client, alpha, beta,
                                                                                     clickhouse, clock):
    (alpha, key), (beta, beta_key) = alpha, beta
    alpha.ingest_max_services_per_hour = 3
    alpha.save()
    names = ("svc-1", "svc-2", "svc-3", "svc-4", "svc-5")
    assert message(post(client, key, services(*names))) == (
        0, "2 span(s) had a service past the project's limit of 3 per hour; stored as __other__")
    assert stored(alpha, "service") == ["svc-1", "svc-2", "svc-3", OTHER, OTHER]
    # rewritten on the resource, where the value came from: the raw attributes do not keep it either
    assert [r["resource_attributes"]["service.name"] for r in spans(alpha.id, "resource_attributes")][3:] == [OTHER] * 2
    # beta, with the default limit (200), keeps all five
    assert message(post(client, beta_key, services(*names))) == (0, "")
    assert stored(beta, "service") == list(names)
    body = status(client, key)
    assert body["services"] == {"limit": 3, "seen_this_hour": 3, "folded_spans": 2}
    # every span has the route, tenant and instance of the factories: one value each
    assert body["routes"] == {"limit": 1000, "seen_this_hour": 1, "folded_spans": 0}
    assert body["tenants"]["seen_this_hour"] == body["instances"]["seen_this_hour"] == 1
    assert status(client, beta_key)["services"] == {"limit": 200, "seen_this_hour": 5, "folded_spans": 0}


def test_a_value_seen_this_hour_stays_accepted_and_the_next_hour_starts_over(client, alpha, clickhouse, clock):
    alpha, key = alpha
    alpha.ingest_max_services_per_hour = 2
    alpha.save()
    answer(post(client, key, services("a", "b", "c")))  # c: __other__
    assert message(post(client, key, services("b", "a"))) == (0, "")  # seen this hour: accepted
    assert message(post(client, key, services("d")))[1].startswith("1 span(s) had a service past")
    clock.now += 3600
    assert message(post(client, key, services("c", "d", "a"))) == (
        0, "1 span(s) had a service past the project's limit of 2 per hour; stored as __other__")
    assert stored(alpha, "service") == ["a", "b", OTHER, "b", "a", OTHER, "c", "d", OTHER]
    assert status(client, key)["services"] == {"limit": 2, "seen_this_hour": 2, "folded_spans": 3}


def test_routes_tenants_and_instances_fold_where_the_mapping_reads_them(client, alpha, clickhouse, clock):
    alpha, key = alpha
    alpha.ingest_max_routes_per_hour = alpha.ingest_max_tenants_per_hour = alpha.ingest_max_instances_per_hour = 1
    alpha.save()
    req = ExportTraceServiceRequest()
    first = f.request(f.attempt(route="/a", tenant="t1"), instance="i-1")
    # the route from http.route, then from the span name; the tenant from the resource; the instance on the span
    second = f.request(f.attempt(route=None, tenant=None, attributes={"http.route": "/b", "service.instance.id": "i-2"}),
                       f.span(name="by-name", attributes={"service.instance.id": "i-1"}),
                       instance="i-1", resource={"tenant.id": "t2"})
    req.resource_spans.extend([*first.resource_spans, *second.resource_spans])
    assert message(post(client, key, req))[1] == (
        "2 span(s) had a route past the project's limit of 1 per hour; stored as __other__; "
        "2 span(s) had a tenant past the project's limit of 1 per hour; stored as __other__; "
        "1 span(s) had an instance past the project's limit of 1 per hour; stored as __other__")
    stored(alpha, "span_id")  # flushed
    rows = [(r["route"], r["tenant"], r["instance"]) for r in spans(alpha.id, "route, tenant, instance")]
    assert rows == [("/a", "t1", "i-1"), (OTHER, OTHER, OTHER), (OTHER, OTHER, "i-1")]
    body = status(client, key)
    assert {d: body[d]["folded_spans"] for d in ("routes", "tenants", "instances")} == {
        "routes": 2, "tenants": 2, "instances": 1}


def test_the_value_judged_is_the_one_the_mapping_stores(client, alpha, clickhouse, clock):
    alpha, key = alpha
    alpha.ingest_max_tenants_per_hour = alpha.ingest_max_services_per_hour = 1
    alpha.save()
    answer(post(client, key, f.request(f.attempt(tenant="t1"), service="svc-1")))
    repeated = f.attempt(tenant="t2", attributes={"service.name": "svc-2"})
    repeated.attributes.add(key="tenant.id").value.string_value = "t1"  # ClickHouse reads the first: t2
    # the span's own service.name wins over the resource's svc-1
    assert message(post(client, key, f.request(repeated, service="svc-1"))) == (0, (
        "1 span(s) had a service past the project's limit of 1 per hour; stored as __other__; "
        "1 span(s) had a tenant past the project's limit of 1 per hour; stored as __other__"))
    stored(alpha, "span_id")  # flushed
    assert [(r["service"], r["tenant"]) for r in spans(alpha.id, "service, tenant")] == [("svc-1", "t1"), (OTHER, OTHER)]


def test_json_requests_are_folded_too(client, alpha, clickhouse, clock):
    alpha, key = alpha
    alpha.ingest_max_tenants_per_hour = 1
    alpha.save()
    doc = f.otlp_json(f.request(f.attempt(tenant="t1"), f.attempt(tenant="t2"), f.attempt(tenant="t1")))
    response = post(client, key, doc, JSON)
    assert response.json()["partialSuccess"]["errorMessage"].startswith("1 span(s) had a tenant past")
    assert stored(alpha, "tenant") == ["t1", OTHER, "t1"]


def test_an_unlimited_dimension_is_not_tracked(client, alpha, clickhouse, clock):
    alpha, key = alpha
    alpha.ingest_max_services_per_hour = 0
    alpha.save()
    assert message(post(client, key, services(*[f"s{i}" for i in range(5)]))) == (0, "")
    assert status(client, key)["services"] == {"limit": 0, "seen_this_hour": None, "folded_spans": 0}


def test_lenient_requests_with_bytes_strings_are_folded(db, settings, clock):
    settings.INGEST_MAX_SERVICES_PER_HOUR = 1
    lenient = LenientRequest.FromString(services("a", "b").SerializeToString())
    lenient.resource_spans[1].scope_spans[0].spans[0].name = b"bad \xff utf-8"
    decoded = decode_protobuf(lenient.SerializeToString(), 128, partial(cardinality.fold, 999_999))
    assert decoded.folded == Counter(services=1) and decoded.accepted == 2
    kept = LenientRequest.FromString(decoded.body)
    assert [{kv.key: kv.value.string_value for kv in rs.resource.attributes}[b"service.name"]
            for rs in kept.resource_spans] == [b"a", OTHER.encode()]


def test_values_decided_per_distinct_value_fold_exactly_as_span_by_span(db, settings, clock, monkeypatch):
    """fold decides a resource's distinct values column by column (AttributeView) and goes span by span only
    when something folds; on mixed requests near every limit both ways give the same bytes, folds and sets."""
    import random

    settings.INGEST_MAX_SERVICES_PER_HOUR, settings.INGEST_MAX_ROUTES_PER_HOUR = 3, 4
    settings.INGEST_MAX_TENANTS_PER_HOUR, settings.INGEST_MAX_INSTANCES_PER_HOUR = 5, 2
    rng = random.Random(7)

    def mixed() -> ExportTraceServiceRequest:
        req = ExportTraceServiceRequest()
        for _ in range(rng.randint(1, 3)):
            spans_ = []
            for _ in range(rng.randint(1, 12)):
                extra = {"http.route": rng.choice([None, "/h1", "/h2"])}
                if rng.random() < 0.1:  # a repeated key: the mapping reads the first
                    extra["tenant.id"] = None
                span = f.attempt(tenant=rng.choice([None, "", *"abcdefg"]), route=rng.choice([None, "/r1", "/r2", "/r3"]),
                                 attributes=extra, name=rng.choice(["POST a", "POST b", "POST c"]))
                if "tenant.id" in extra:
                    span.attributes.append(f.kv("tenant.id", rng.choice("xyz")))
                    span.attributes.append(f.kv("tenant.id", rng.choice("xyz")))
                spans_.append(span)
            req.resource_spans.extend(f.request(*spans_, service=rng.choice("STUVW"), instance=rng.choice("123"),
                                                resource={"llm.route": rng.choice([None, "/res"])}).resource_spans)
        return req

    answers, admits_all = Counter(), cardinality._Admission.admits_all

    def counted(self, *args):
        answer = admits_all(self, *args)
        answers[answer] += 1
        return answer

    monkeypatch.setattr(cardinality._Admission, "admits_all", counted)
    total = Counter()
    for _ in range(30):
        requests = [mixed() for _ in range(4)]
        outcomes = []
        for fast in (True, False):
            monkeypatch.setattr(cardinality, "tracker", cardinality.Tracker(clock=clock))
            done = []
            for req in requests:
                copy = ExportTraceServiceRequest.FromString(req.SerializeToString())
                folded, warnings = cardinality.fold(999_999, copy, copy.SerializeToString() if fast else None)
                done.append((folded, warnings, copy.SerializeToString()))
            outcomes.append((done, cardinality.tracker.seen))
        assert outcomes[0] == outcomes[1]
        for folded, _, _ in outcomes[0][0]:
            total.update(folded)
    # both ways were taken, and every dimension folded somewhere
    assert answers[True] and answers[False] and set(total) == {"services", "routes", "tenants", "instances"}
