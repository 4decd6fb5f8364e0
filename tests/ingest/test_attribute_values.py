"""Array and kvlist attribute values are stored as JSON text, sent as OTLP protobuf and as OTLP/JSON."""
import json

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from ingest.pipeline import get_writer
from tests import factories as f
from tests.helpers import spans

pytestmark = pytest.mark.django_db
ENCODINGS = {"protobuf": "application/x-protobuf", "json": "application/json"}
LISTS = {
    "gen_ai.response.finish_reasons": ["stop", "length"],
    "numbers": [1, 2.5, True, float("nan")],
    "empty": [],
    "nested": [["deep"], {"k": "v"}],  # deeper than one level: null
    "text": ['quote " and \\ and é'],
    "raw": [b"\x01\xff"],
}
KVLIST = {"llm.invocation": {"model": "m", "stream": True, "n": 2, "inner": {"x": 1}}}
EXPECTED = {
    "gen_ai.response.finish_reasons": '["stop","length"]',
    "numbers": "[1,2.5,true,null]",
    "empty": "[]",
    "nested": "[null,null]",
    "text": '["quote \\" and \\\\ and é"]',
    "raw": '["01ff"]',
    "llm.invocation": '{"model":"m","stream":true,"n":2,"inner":null}',
}


def _send(client, key, encoding):
    llm = f.span(name="chat m", kind=Span.SPAN_KIND_CLIENT, attributes={"gen_ai.request.model": "m", **LISTS, **KVLIST})
    request = f.request(llm, resource={"host.tags": ["a", "b"], "scalar": "s"})
    body = json.dumps(f.otlp_json(request)) if encoding == "json" else request.SerializeToString()
    answer = client.post("/v1/traces", data=body, content_type=ENCODINGS[encoding],
                         HTTP_AUTHORIZATION=f"Bearer {key}")
    assert answer.status_code == 200, answer.content
    get_writer().flush(force=True)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_arrays_and_kvlists_are_stored_as_json_text(client, alpha, clickhouse, encoding):
    project, key = alpha
    _send(client, key, encoding)
    [row] = spans(project.id, "role, model, span_attributes, resource_attributes")
    assert (row["role"], row["model"]) == ("attempt", "m")
    assert {k: row["span_attributes"][k] for k in EXPECTED} == EXPECTED
    assert json.loads(row["span_attributes"]["gen_ai.response.finish_reasons"]) == ["stop", "length"]
    assert (row["resource_attributes"]["host.tags"], row["resource_attributes"]["scalar"]) == ('["a","b"]', "s")
