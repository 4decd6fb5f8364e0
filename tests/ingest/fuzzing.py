"""Hostile OTLP/HTTP requests as hypothesis strategies, and the check every answer must pass.

Shared by tests/ingest/test_fuzz.py (a few thousand cases in `make test`) and benchmarks/fuzz_ingest.py
(`make fuzz`, 100,000+). A case is a `Case`; `send` posts it through Django's test client, `check`
asserts the answer is documented and readable and returns its label ("200 partial_success", "400
malformed_json", ...). Profiles: "ci" (the default: derandomized, so every run tries the same cases)
and "fuzz" (HYPOTHESIS_PROFILE=fuzz: random, many more cases).
"""
import gzip
import json
import os
import re
from dataclasses import dataclass, field

from google.protobuf import json_format
from google.rpc.status_pb2 import Status
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests import factories as f

_QUIET = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large,
          HealthCheck.large_base_example, HealthCheck.filter_too_much]
# make test: 400 cases a test (2,400 in all; 800 were ~64 of the suite's ~1,600 CPU-s, 2026-11-30); `make fuzz` runs
# 100,000 random ones
settings.register_profile("ci", max_examples=400, derandomize=True, deadline=None, database=None,
                          suppress_health_check=_QUIET, print_blob=True)
# make test-fast, the inner loop: the same derandomized strategies, fewer cases (make test runs "ci")
settings.register_profile("quick", max_examples=120, derandomize=True, deadline=None, database=None,
                          suppress_health_check=_QUIET, print_blob=True)
settings.register_profile("fuzz", max_examples=20_000, deadline=None, database=None, suppress_health_check=_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

PB, JSON = "application/x-protobuf", "application/json"
# What /v1/traces and the API may answer (README "What the endpoint answers"); 5xx only these 503s.
DOCUMENTED = {200, 400, 401, 403, 404, 405, 413, 415, 429, 503}
DOCUMENTED_503 = {"spool_full", "query_timeout", "store_error"}
KEY_KINDS = ("ingest", "read", "revoked")  # Case.auth names these; the sender has the real keys


@dataclass
class Case:
    """One HTTP request. `auth` is a KEY_KINDS name, a raw Authorization value, or None (no header)."""

    body: bytes = b""
    content_type: str | None = PB
    auth: str | None = "ingest"
    method: str = "POST"
    path: str = "/v1/traces"
    extra: dict = field(default_factory=dict)  # WSGI keys: HTTP_CONTENT_ENCODING, CONTENT_LENGTH, ...


def send(client, case: Case, keys: dict):
    """The test client's answer to `case`; keys maps KEY_KINDS to raw keys."""
    extra = dict(case.extra)
    if case.auth in keys:
        extra["HTTP_AUTHORIZATION"] = f"Bearer {keys[case.auth]}"
    elif case.auth is not None:
        extra["HTTP_AUTHORIZATION"] = case.auth
    if case.content_type is not None:
        extra.setdefault("CONTENT_TYPE", case.content_type)  # the client drops content_type with an empty body
    return client.generic(case.method, case.path, data=case.body, content_type=case.content_type or "", **extra)


def check(case: Case, response) -> str:
    """Assert the answer is documented, parses in its stated type and, for a 200 on /v1/traces, is an
    ExportTraceServiceResponse; returns "<status> <reason>"."""
    status = response.status_code
    media = response.get("Content-Type", "").split(";")[0].strip()
    reason = response.get("X-Latency-Obs-Reason", "")
    assert status in DOCUMENTED, f"undocumented status {status}: {response.content[:300]!r}"
    assert media in (PB, JSON), f"{status} answered {media!r}, not JSON or protobuf: {response.content[:300]!r}"
    if case.method == "HEAD":
        return f"{status} {reason or 'head'}"
    if status == 200 and case.path.split("?")[0] == "/v1/traces":
        answer = ExportTraceServiceResponse()
        if media == JSON:
            json_format.Parse(response.content, answer)
        else:
            answer.ParseFromString(response.content)
        assert answer.partial_success.rejected_spans >= 0
        return "200 partial_success" if answer.HasField("partial_success") else "200 ok"
    if media == PB:
        Status.FromString(response.content)
    else:
        body = json.loads(response.content)
        assert isinstance(body, dict), body
        reason = reason or body.get("error", "")
    if status >= 400:
        assert reason, f"{status} without a reason: {response.content[:300]!r}"
    if status >= 500:
        assert status == 503 and reason in DOCUMENTED_503, f"{status} {reason}: {response.content[:300]!r}"
    return f"{status} {reason or 'ok'}"


# --- valid spans and requests ---------------------------------------------------------------------

ids16 = st.binary(min_size=16, max_size=16).filter(any)
ids8 = st.binary(min_size=8, max_size=8).filter(any)
# TRICKY: hypothesis draws text a character at a time, the bulk of a case's cost: texts stay short
names = st.sampled_from(["chat", "llm-gateway", "", "tenant-1", "/v1/chat", "\u00e9\u4e2d\U0001F600", "a" * 300]) | st.text(max_size=8)
attr_values = st.one_of(names, st.integers(-(2**63), 2**63 - 1), st.floats(), st.booleans(), st.binary(max_size=12))
attributes = st.dictionaries(names, attr_values, max_size=3)


@st.composite
def valid_spans(draw) -> Span:
    """A span decode must keep: ids, times in the past day of the factories' base time, any names."""
    start = f.BASE_NS + draw(st.integers(0, 86_400 * 10**9))
    trace_id = draw(ids16)
    if draw(st.booleans()):
        ms = st.floats(0, 60_000)
        s = f.attempt(t_queue_ms=draw(ms), t_first_token_ms=draw(ms), t_stream_ms=draw(ms), t_post_ms=draw(ms),
                      tenant=draw(names), route=draw(names), start_ns=start, trace_id=trace_id)
    else:
        s = f.span(name=draw(names), start_ns=start, duration_ms=draw(st.floats(0, 3_600_000)),
                   attributes=draw(attributes), trace_id=trace_id, kind=draw(st.integers(0, 5)))
    s.span_id = draw(ids8)
    if draw(st.booleans()):
        s.parent_span_id = draw(ids8)
    return s


valid_requests = st.builds(lambda spans, service, resource: f.request(*spans, service=service, resource=resource),
                           st.lists(valid_spans(), min_size=1, max_size=4), names, attributes)
valid_bodies = valid_requests.map(lambda r: r.SerializeToString())


# --- byte mutations (protobuf, JSON text, gzip) -----------------------------------------------------

def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


EDGE_INTS = [0, 1, 127, 128, 2**31 - 1, 2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1]
varints = st.one_of(st.sampled_from(EDGE_INTS), st.integers(0, 2**64 - 1)).map(varint)
# an overlong varint (10 bytes of continuation), and a field tag with a group or invalid wire type
odd_tokens = st.one_of(varints, st.just(b"\xff" * 10 + b"\x01"),
                       st.builds(lambda n, w: varint(n << 3 | w), st.integers(1, 2**29 - 1), st.integers(0, 7)))


@st.composite
def mutated(draw, base: bytes, extra: st.SearchStrategy = st.binary(max_size=64)) -> bytes:
    """base after 1-4 edits: byte flips, truncation, insertion, deletion, concatenation, varint splices."""
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "truncate", "insert", "delete", "concat", "varint", "duplicate"]))
        i = draw(st.integers(0, len(data)))
        j = draw(st.integers(i, min(len(data), i + 16)))
        if op == "flip" and i < len(data):
            data[i] ^= draw(st.integers(1, 255))
        elif op == "truncate":
            del data[i:]
        elif op == "insert":
            data[i:i] = draw(st.binary(min_size=1, max_size=16))
        elif op == "delete":
            del data[i:j]
        elif op == "concat":
            data += draw(extra)
        elif op == "varint":
            data[i:j] = draw(odd_tokens)
        elif op == "duplicate":
            data[i:i] = data[i:j] * draw(st.integers(1, 8))
    return bytes(data)


protobuf_bodies = st.one_of(
    valid_bodies,
    valid_bodies.flatmap(lambda body: mutated(body, st.one_of(valid_bodies, st.binary(max_size=64)))),
    valid_bodies.flatmap(mutated),
    st.binary(max_size=256),
)


# --- OTLP/JSON documents: a valid document, then its nodes swapped for hostile values ---------------------

# Numbers json.dumps cannot write; a "@@RAW:x@@" string is replaced by x in the text (see dumps()).
RAW_NUMBERS = ["1e400", "-1e400", "1E+309", "1e-400", "Infinity", "-Infinity", "NaN", "-0", "0.5", "1.0e19",
               "123456789012345678901234567890", "18446744073709551616", "9223372036854775808",
               "-9223372036854775809", "4294967296", "2147483648", "-1", "1" * 5000]
_RAW = re.compile(r'"@@RAW:([^"@]*)@@"')


def raw(text: str) -> str:
    return f"@@RAW:{text}@@"


def _deep(depth: int, shape: str) -> str:
    if shape == "list":
        return "[" * depth + "]" * depth
    if shape == "object":
        return '{"a":' * depth + "1" + "}" * depth
    anyvalue = '{"kvlistValue":{"values":[{"key":"k","value":' * depth + '{"stringValue":"x"}' + "}]}}" * depth
    return anyvalue


surrogates = st.characters(categories=["Cs"])
odd_text = st.text(st.one_of(st.characters(), surrogates), max_size=8)
hex_ids = st.one_of(st.binary(max_size=20).map(bytes.hex), st.sampled_from(["0" * 32, "0" * 16, "zz" * 16, "abc", "AB" * 8]))
json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), odd_text, hex_ids,
    st.sampled_from(RAW_NUMBERS).map(raw),
)
json_values = st.recursive(json_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                                  st.dictionaries(odd_text, inner, max_size=3)),
                           max_leaves=8)
hostile_values = st.one_of(
    json_values,
    st.builds(lambda d, s: raw(_deep(d, s)), st.integers(1, 3000), st.sampled_from(["list", "object", "anyvalue"])),
    st.integers(1, 60).map(lambda d: json.loads(_deep(d, "anyvalue"))),  # deep but parseable AnyValue
)


def _slots(doc) -> list[tuple]:
    """(container, key) of every node under doc, parents first."""
    out, todo = [], [doc]
    while todo:
        node = todo.pop()
        keys = range(len(node)) if isinstance(node, list) else list(node) if isinstance(node, dict) else []
        for key in keys:
            out.append((node, key))
            todo.append(node[key])
    return out


@st.composite
def hostile_documents(draw, base=None) -> object:
    """A valid OTLP/JSON document (or `base`) with 1-4 nodes replaced, removed, renamed or added."""
    doc = draw(valid_requests.map(f.otlp_json)) if base is None else base
    for _ in range(draw(st.integers(1, 4))):
        slots = _slots(doc)
        if not slots:
            return draw(hostile_values) if draw(st.booleans()) else doc
        container, key = draw(st.sampled_from(slots))
        op = draw(st.sampled_from(["replace", "replace", "remove", "rename", "add", "wrap"]))
        if op == "replace":
            container[key] = draw(hostile_values)
        elif op == "remove":
            del container[key]
        elif op == "rename" and isinstance(container, dict):
            container[draw(odd_text)] = container.pop(key)
        elif op == "add" and isinstance(container[key], dict):
            container[key][draw(st.sampled_from(["kind", "name", "traceId", "spans", "x"]) | odd_text)] = draw(hostile_values)
        elif op == "wrap":
            container[key] = [container[key]]
    return doc


def dumps(doc, ascii_only: bool = True) -> bytes:
    """JSON bytes; raw() tokens are written as they are. Not ascii_only: lone surrogates become bad UTF-8."""
    text = _RAW.sub(lambda m: m.group(1), json.dumps(doc, ensure_ascii=ascii_only))
    return text.encode("utf-8", errors="surrogatepass")


json_bodies = st.one_of(
    st.builds(dumps, hostile_documents(), st.booleans()),
    st.builds(dumps, hostile_documents()).flatmap(mutated),
    st.builds(dumps, json_values),
    valid_requests.map(lambda r: dumps(f.otlp_json(r))),
)


# --- whole requests: encodings, content types, headers --------------------------------------------------------

latin1 = st.text(st.characters(max_codepoint=255), max_size=40)
CONTENT_TYPES = [PB, PB, JSON, JSON, "application/protobuf", "application/json; charset=utf-8", "application/JSON",
                 "text/plain", "", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded",
                 "application/x-protobuf; proto=x", "*/*", "application/json; charset=latin-1"]
MEANT_TYPES = [PB, JSON, "application/protobuf", "application/json; charset=utf-8"]
ENCODINGS = ["", "", "gzip", "gzip", "GZIP", " gzip ", "identity", "deflate", "br", "gzip, gzip", "x-gzip"]
AUTHS = [*KEY_KINDS, "ingest", "ingest", "ingest", None, "Bearer", "Bearer ", "bearer", "Basic dXNlcjpwYXNz",
         "Bearer lo_" + "x" * 43, "Bearer " + "a" * 5000, "Bearer \x00", "Bearer lo_\xe9\xff"]


def often(values: list, otherwise: st.SearchStrategy) -> st.SearchStrategy:
    """One of values, three times in four; else a draw of `otherwise`."""
    return st.integers(0, 3).flatmap(lambda n: st.sampled_from(values) if n else otherwise)


@st.composite
def gzipped(draw, body: bytes) -> bytes:
    packed = gzip.compress(body, compresslevel=1)
    return draw(st.one_of(st.just(packed), mutated(packed), st.just(packed[: len(packed) // 2]), st.just(body)))


@st.composite
def ingest_cases(draw) -> Case:
    """POST /v1/traces with any body, content type, encoding and Authorization."""
    body = draw(st.one_of(protobuf_bodies, json_bodies))
    encoding = draw(often(ENCODINGS, latin1))
    if "gzip" in encoding.lower() and draw(st.integers(0, 4)):
        body = draw(gzipped(body))
    extra = {"HTTP_CONTENT_ENCODING": encoding} if encoding else {}
    # TRICKY: never a Content-Length above the body: the test client (unlike a socket) fails reading past it
    extra.update(draw(st.sampled_from([{}, {}, {}, {"CONTENT_LENGTH": "abc"}, {"CONTENT_LENGTH": "-1"},
                                       {"CONTENT_LENGTH": ""}, {"CONTENT_LENGTH": str(len(body) // 2)}])))
    content_type = draw(often(MEANT_TYPES, st.sampled_from(CONTENT_TYPES) | latin1))
    return Case(body=body, content_type=content_type, auth=draw(often(AUTHS, latin1)),
                method=draw(st.sampled_from(["POST"] * 8 + ["PUT", "GET"])), extra=extra)


API_PATHS = ["/v1/traces", "/v1/traces/", "/v1/metrics", "/v1/logs", "/v1/", "/api/", "/api/v1/", "/api/v1/diagnosis",
             "/api/v1/diagnosis/", "/api/v1/ingest/status", "/api/v2/diagnosis", "/api/v1/nope"]
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "PROPFIND", "BREW"]
query_values = st.one_of(st.sampled_from(["2026-01-05T10:00:00Z", "2026-01-05T11:00:00+00:00", "2026-01-05",
                                          "0001-01-01T00:00:00", "9999-12-31T23:59:59Z", "llm-gateway", "alpha"]),
                         st.text(max_size=20))
WINDOW = {"service": "llm-gateway", "start": "2026-01-05T00:00:00Z", "end": "2026-01-06T00:00:00Z"}
path_text = st.text("abcdefghijklmnopqrstuvwxyz0123456789-_./%~", max_size=20)


@st.composite
def api_cases(draw) -> Case:
    """Any method on /api/ and /v1/ paths (known, unknown, with odd suffixes and query strings)."""
    path = draw(often(["/api/v1/diagnosis", "/api/v1/ingest/status", "/v1/traces"], st.sampled_from(API_PATHS)))
    if draw(st.integers(0, 5)) == 0:
        path = draw(st.sampled_from(["/api/", "/v1/", "/api/v1/"])) + draw(path_text)
    params = draw(often([WINDOW], st.just({})))  # a window the diagnosis accepts, then maybe spoiled
    params = {**params, **draw(st.dictionaries(st.sampled_from(["start", "end", "service", "project", "route", "tenant"]),
                                               query_values, max_size=3))}
    query = "&".join(f"{k}={v}" for k, v in params.items()).replace("#", "%23").replace(" ", "%20")
    body = draw(st.one_of(st.just(b""), st.binary(max_size=64), valid_bodies))
    return Case(body=body, content_type=draw(st.sampled_from(CONTENT_TYPES)), auth=draw(often(["read"], st.sampled_from(AUTHS))),
                method=draw(often(["GET", "GET", "POST"], st.sampled_from(METHODS))), path=f"{path}?{query}" if query else path)


# --- requests mixing valid spans with hostile ones: decode must keep exactly the valid ones ---------------

BAD_UTF8_MARK = "\x7fBADUTF8\x7f"  # a span name swapped for invalid UTF-8 bytes of the same length


def _json_span(span: Span) -> dict:
    return f.json_spans(f.otlp_json(f.request(span)))[0]


@st.composite
def benign_json_spans(draw) -> tuple[dict, bytes]:
    """(OTLP/JSON span, its span id): valid, with oddities decode must accept."""
    span = draw(valid_spans())
    doc = _json_span(span)
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["surrogates", "unknown_field", "kind_name", "upper_ids", "int_times", "attribute"]))
        if op == "surrogates":
            doc["name"] = draw(odd_text)
        elif op == "unknown_field":
            doc[draw(st.sampled_from(["x", "extra", "\ud800"]))] = draw(json_values)
        elif op == "kind_name":
            doc["kind"] = draw(st.sampled_from(["SPAN_KIND_CLIENT", "SPAN_KIND_SERVER", 3, "NO_SUCH_KIND"]))
        elif op == "upper_ids":
            doc["traceId"], doc["spanId"] = doc["traceId"].upper(), doc["spanId"].upper()
        elif op == "int_times":
            doc["startTimeUnixNano"], doc["endTimeUnixNano"] = int(doc["startTimeUnixNano"]), int(doc["endTimeUnixNano"])
        elif op == "attribute":
            value = draw(st.sampled_from([{"stringValue": draw(odd_text)}, {"intValue": "-5"}, {"intValue": 7},
                                          {"doubleValue": "NaN"}, {"doubleValue": "-Infinity"}, {"boolValue": True}]))
            doc.setdefault("attributes", []).append({"key": draw(odd_text), "value": value})
    return doc, span.span_id


# (field, values) of which any one makes a span invalid
FATAL_JSON = [
    ("traceId", ["zz" * 16, "0" * 32, "abc", "ab" * 8, 5, None, raw("1e400"), "\ud800" * 32]),
    ("spanId", ["0" * 16, "zz" * 8, "ab" * 16, [], "\udfff" * 16]),
    ("parentSpanId", ["abc", "ab" * 4, 12]),
    ("startTimeUnixNano", ["-5", "0", {"seconds": 5}, "abc", raw("1e400"), raw("-1"), [1], raw("Infinity")]),
    ("endTimeUnixNano", ["0", raw("NaN"), "18446744073709551616"]),
    ("kind", [raw("1e400"), raw("Infinity"), raw("-Infinity"), 10**30, -(2**40)]),
    ("droppedAttributesCount", [raw("1e400"), -1, 2**40, "x"]),
    ("name", [{"a": 1}, [1]]),
    ("status", [[1], 5]),  # TRICKY: not "a string": json_format reads its letters as unknown field names
    ("attributes", ["not a list", [{"key": "k", "value": {"intValue": raw("1e400")}}],
                    [{"key": "k", "value": {"intValue": "99999999999999999999999"}}]]),
    ("events", [[{"timeUnixNano": raw("Infinity")}], "x"]),
]


@st.composite
def fatal_json_spans(draw) -> object:
    """An OTLP/JSON span with at least one fatal defect (after any benign oddities), or not a span at all."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from([[], "span", 5, None, True]))
    doc, _ = draw(benign_json_spans())
    key, values = draw(st.sampled_from(FATAL_JSON))
    doc[key] = draw(st.sampled_from(values))
    if key == "endTimeUnixNano" and draw(st.booleans()):
        doc[key] = str(int(doc["startTimeUnixNano"]) - 1)  # end_before_start
    return doc


@st.composite
def mixed_json_requests(draw) -> tuple[bytes, list[bytes], int]:
    """(OTLP/JSON body, span ids of its valid spans, number of hostile spans), in 1-2 resources x 1-2 scopes,
    plus maybe a resource or scope that cannot be read (its spans all hostile)."""
    valid = draw(st.lists(benign_json_spans(), max_size=6))
    hostile = draw(st.lists(fatal_json_spans(), max_size=6))
    spans = [doc for doc, _ in valid] + hostile
    order = draw(st.permutations(range(len(spans))))
    scopes = [[] for _ in range(draw(st.integers(1, 4)))]
    for i in order:
        scopes[draw(st.integers(0, len(scopes) - 1))].append(spans[i])
    resource = {"attributes": [{"key": draw(odd_text), "value": {"stringValue": draw(odd_text)}}]}
    doc = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {"name": draw(odd_text)}, "spans": s}
                                                                   for s in scopes[:2]]}]}
    if len(scopes) > 2:
        doc["resourceSpans"].append({"scopeSpans": [{"spans": s} for s in scopes[2:]]})
    extra = draw(st.lists(fatal_json_spans(), max_size=2))
    if extra and draw(st.booleans()):
        doc["resourceSpans"].append({"resource": draw(st.sampled_from(["x", [1], {"attributes": 5}])),
                                     "scopeSpans": [{"spans": extra}]})
    elif extra:
        doc["resourceSpans"][0]["scopeSpans"].append({"scope": draw(st.sampled_from(["x", {"name": [1]}])), "spans": extra})
    else:
        extra = []
    return dumps(doc, ascii_only=draw(st.booleans())), [i for _, i in valid], len(hostile) + len(extra)


def _spoil(span: Span, defect: str, draw) -> None:
    if defect == "trace_id":
        span.trace_id = draw(st.sampled_from([b"", b"\0" * 16, b"\1" * 8, b"\1" * 17]))
    elif defect == "span_id":
        span.span_id = draw(st.sampled_from([b"", b"\0" * 8, b"\1" * 4, b"\1" * 9]))
    elif defect == "parent_span_id":
        span.parent_span_id = draw(st.sampled_from([b"\1" * 4, b"\1" * 16]))
    elif defect == "zero_time":
        span.start_time_unix_nano = 0
    else:  # end_before_start
        span.end_time_unix_nano = span.start_time_unix_nano - 1


@st.composite
def mixed_protobuf_requests(draw) -> tuple[bytes, list[bytes], int]:
    """(protobuf body, span ids of its valid spans, number of hostile spans); a valid span may carry a name
    that is not UTF-8, and the body may be two requests concatenated (protobuf merges them)."""
    valid, hostile = draw(st.lists(valid_spans(), max_size=6)), draw(st.lists(valid_spans(), max_size=6))
    for span in hostile:
        _spoil(span, draw(st.sampled_from(["trace_id", "span_id", "parent_span_id", "zero_time", "end_before_start"])), draw)
    spans = valid + hostile
    order = draw(st.permutations(range(len(spans))))
    cut = draw(st.integers(0, len(spans)))
    bad_utf8 = bool(valid) and draw(st.booleans())
    if bad_utf8:
        valid[0].name = BAD_UTF8_MARK
    parts = [f.request(*[spans[i] for i in order[:cut]], service=draw(names)),
             f.request(*[spans[i] for i in order[cut:]], service=draw(names))]
    body = b"".join(p.SerializeToString() for p in parts)
    if bad_utf8:
        mark = BAD_UTF8_MARK.encode()
        body = body.replace(mark, b"\xff" * len(mark), 1)
    return body, [s.span_id for s in valid], len(hostile)
