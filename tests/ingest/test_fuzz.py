"""Fuzzing /v1/traces and the API through Django's test client: never a 5xx (but a documented 503), every
answer documented and readable, and decode never loses a valid span among hostile ones.

The "ci" hypothesis profile (tests/ingest/fuzzing.py) runs a few thousand derandomized cases here; `make fuzz`
runs the same strategies 100,000+ times. A failure prints the shrunk case and a @reproduce_failure blob.
"""
import gzip

import pytest
from django.conf import settings as django_settings
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from ingest.decode import decode_json, decode_protobuf
from ingest.otlp_proto import LenientRequest
from projects.models import ApiKey
from tests.ingest import fuzzing as fz

@pytest.fixture
def keys(alpha, clickhouse):
    """Raw keys of project alpha for fz.KEY_KINDS; the writer flushes the accepted spans to chDB meanwhile."""
    project, ingest_key = alpha
    read = ApiKey.issue(project, ["read"])[1]
    row, revoked = ApiKey.issue(project, ["ingest"])
    row.revoke()
    return {"ingest": ingest_key, "read": read, "revoked": revoked}


@pytest.fixture
def api(keys):
    """(client, keys); every exception answers (as a user would see it) instead of being raised into the test."""
    return Client(raise_request_exception=False), keys


@given(body=fz.protobuf_bodies, gzipped=st.booleans())
def test_mutated_protobuf_bodies_are_answered_as_documented(api, body, gzipped):
    client, keys = api
    case = fz.Case(body=body)
    if gzipped:
        case.body, case.extra = gzip.compress(body, compresslevel=1), {"HTTP_CONTENT_ENCODING": "gzip"}
    fz.check(case, fz.send(client, case, keys))


@given(body=fz.json_bodies)
def test_hostile_json_documents_are_answered_as_documented(api, body):
    client, keys = api
    case = fz.Case(body=body, content_type=fz.JSON)
    fz.check(case, fz.send(client, case, keys))


@given(case=fz.ingest_cases())
def test_odd_headers_encodings_and_bodies_are_answered_as_documented(api, case):
    client, keys = api
    fz.check(case, fz.send(client, case, keys))


@given(case=fz.api_cases())
def test_any_method_on_api_and_v1_paths_answers_json(api, case):
    client, keys = api
    label = fz.check(case, fz.send(client, case, keys))
    assert not label.startswith("5") or label.split()[1] in fz.DOCUMENTED_503


@given(mixed=fz.mixed_json_requests())
def test_json_valid_spans_are_all_accepted_among_hostile_ones(mixed):
    body, valid_ids, hostile = mixed
    decoded = decode_json(body, django_settings.INGEST_MAX_ATTRIBUTES)
    assert (decoded.accepted, decoded.rejected_count) == (len(valid_ids), hostile), decoded.message()
    # strict parsing: no lone surrogate is left in what goes to the spool
    kept = ExportTraceServiceRequest.FromString(decoded.body)
    assert sorted(s.span_id for rs in kept.resource_spans for ss in rs.scope_spans for s in ss.spans) == sorted(valid_ids)


@given(mixed=fz.mixed_protobuf_requests())
def test_protobuf_valid_spans_are_all_accepted_among_hostile_ones(mixed):
    body, valid_ids, hostile = mixed
    decoded = decode_protobuf(body, django_settings.INGEST_MAX_ATTRIBUTES)
    assert (decoded.accepted, decoded.rejected_count) == (len(valid_ids), hostile), decoded.message()
    kept = LenientRequest.FromString(decoded.body)
    assert sorted(s.span_id for rs in kept.resource_spans for ss in rs.scope_spans for s in ss.spans) == sorted(valid_ids)
