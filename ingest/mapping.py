"""Spans -> rows of the `spans` table, as ClickHouse SQL over spooled OTLP protobuf.

ClickHouse decodes the spooled requests itself (Protobuf format, schema from otlp_proto) and this
SELECT maps each span: role (attempt / stage / other), the form it came in, the lifecycle instants
of docs/span-convention.md, and the attribute columns. No per-span Python runs on this path, which is
what keeps ingest above 25k spans/s on two cores (`make bench-ingest`, docs/benchmarks.md).

The SQL is assembled from the small expression builders below; every identifier and key in it is a
constant of this module, and the only values (limits, file path) travel as query parameters.
"""
import re
from functools import lru_cache

_ONEOF = (
    "value Enum8('none' = 0, 'string_value' = 1, 'bool_value' = 2, 'int_value' = 3, 'double_value' = 4, "
    "'array_value' = 5, 'kvlist_value' = 6, 'bytes_value' = 7, 'string_value_strindex' = 8)"
)
_SCALARS = "string_value String, bool_value Bool, int_value Int64, double_value Float64, bytes_value String"
# One nesting level of arrays and kvlists is read (`["stop"]`, `{"k": 1}`); the AnyValues inside them are
# read without their own array_value/kvlist_value, so a deeper level renders as null.
_INNER = f"Tuple({_SCALARS}, {_ONEOF})"
_ANY = (
    f"Tuple({_SCALARS}, array_value Tuple(values Array({_INNER})), "
    f"kvlist_value Tuple(values Array(Tuple(key String, value {_INNER}))), {_ONEOF})"
)
_KV = f"Array(Tuple(key String, value {_ANY}))"
# The parts of a SpoolRecord ClickHouse reads; fields not named here are skipped.
STRUCTURE = (
    f"project_id UInt32, resource_spans Array(Tuple(resource Tuple(attributes {_KV}), "
    "scope_spans Array(Tuple(scope Tuple(name String), spans Array(Tuple("
    "trace_id String, span_id String, parent_span_id String, name String, kind Int32, "
    f"start_time_unix_nano UInt64, end_time_unix_nano UInt64, attributes {_KV}, "
    "events Array(Tuple(time_unix_nano UInt64, name String)), status Tuple(message String, code Int32)))))))"
)

NATIVE_EVENTS = ("queued", "admitted", "first_token", "last_token", "released")
CHUNK_EVENT = "gen_ai.content.completion.chunk"  # OpenLLMetry
FIRST_TOKEN_EVENT = "First Token Stream Event"  # OpenInference
# Attributes that make a non-stage span an attempt even without lifecycle timing (on the span itself).
ATTEMPT_KEYS = ("llm.run.id", "llm.attempt", "llm.scheduler.cap", "gen_ai.request.model")
MODEL_KEY = "gen_ai.request.model"
# gen_ai.operation.name values of a model call (an OTel GenAI client span without time_to_first_chunk)
GENAI_OPERATIONS = ("chat", "text_completion", "generate_content")


def _q(text: str) -> str:
    """A constant of this module as a SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _scalar(v: str, otherwise: str = "''") -> str:
    """A scalar AnyValue -> String, as exporters' values read; `otherwise` for arrays, kvlists and none."""
    return (
        f"multiIf({v}.value = 'string_value', {v}.string_value, {v}.value = 'int_value', toString({v}.int_value), "
        f"{v}.value = 'double_value', toString({v}.double_value), "
        f"{v}.value = 'bool_value', if({v}.bool_value, 'true', 'false'), "
        f"{v}.value = 'bytes_value', lower(hex({v}.bytes_value)), {otherwise})"
    )


def _json(v: str) -> str:
    """An AnyValue inside an array or kvlist as JSON: strings and bytes (hex) quoted, NaN/Inf and deeper levels null."""
    return (
        f"multiIf({v}.value = 'string_value', toJSONString(toValidUTF8({v}.string_value)), "
        f"{v}.value = 'int_value', toString({v}.int_value), {v}.value = 'double_value', toJSONString({v}.double_value), "
        f"{v}.value = 'bool_value', if({v}.bool_value, 'true', 'false'), "
        f"{v}.value = 'bytes_value', concat('\"', lower(hex({v}.bytes_value)), '\"'), 'null')"
    )


def _render(v: str) -> str:
    """AnyValue -> String: scalars as exporters' values read, an array as its JSON text (`["stop"]`), a
    kvlist as a JSON object (`{"k":"v"}`)."""
    array = f"concat('[', arrayStringConcat(arrayMap(x -> {_json('x')}, {v}.array_value.values), ','), ']')"
    kvlist = (
        f"concat('{{', arrayStringConcat(arrayMap(x -> concat(toJSONString(toValidUTF8(x.key)), ':', {_json('x.value')}), "
        f"{v}.kvlist_value.values), ','), '}}')"
    )
    return _scalar(v, f"multiIf({v}.value = 'array_value', {array}, {v}.value = 'kvlist_value', {kvlist}, '')")


def _kind(key: str, resource_fallback: bool = True) -> str:
    """Which AnyValue branch an attribute holds ('none' when absent); where absent, the resource's."""
    span = f"sa_kind[{_q(key)}]"
    return f"if({span} != 'none', {span}, ra_kind[{_q(key)}])" if resource_fallback else span


def _raw(key: str, resource_fallback: bool = True) -> str:
    """An attribute's scalar as text (_scalar; arrays and kvlists ''), from the span or else the resource."""
    span = f"sa_text[{_q(key)}]"
    return f"if(sa_kind[{_q(key)}] != 'none', {span}, ra_text[{_q(key)}])" if resource_fallback else span


def _has(key: str) -> str:
    return f"(sa_kind[{_q(key)}] != 'none')"


def text(key: str, limit: int = 512, resource_fallback: bool = True) -> str:
    """A scalar attribute as text for a column (tenant, route, model...); arrays and kvlists read as ''.

    Only the attribute maps render arrays and kvlists: doing it here too cost ~10% more INSERT CPU."""
    return f"leftUTF8(toValidUTF8({_raw(key, resource_fallback)}), {limit})"


def number(key: str, resource_fallback: bool = True) -> str:
    """An int, double or numeric string attribute as Nullable(Float64), read back from its text.

    TRICKY: exact, because ClickHouse prints an Int64 in full and a Float64 in its shortest round-trip form,
    so parsing the text gives what toFloat64 of the value gives (inf and nan included)."""
    kind = _kind(key, resource_fallback)
    return f"if({kind} IN ('int_value', 'double_value', 'string_value'), toFloat64OrNull({_raw(key, resource_fallback)}), NULL)"


def boolean(key: str) -> str:
    """A bool, int (non-zero) or 'true'/'1' string attribute as Nullable(Bool), from its text."""
    kind, raw = _kind(key), _raw(key)
    return (f"multiIf({kind} = 'bool_value', {raw} = 'true', {kind} = 'int_value', {raw} != '0', "
            f"{kind} = 'string_value', lower({raw}) IN ('true', '1'), NULL)")


# TRICKY: every numeric attribute is parsed once per span, as a column of the layer that decides the form (insert_sql),
# and the expressions read that column by its alias: spelled out at each use (a cap's three, a duration's three), the
# lookups made the statement a quarter longer (23.2 KB, 18.5 now), and the analyzer's time grows with the statement, a
# fixed cost every INSERT pays however few spans it holds (an empty batch ~6 % less; docs/ingest-performance.md).
_PARSED: dict[str, str] = {}  # alias -> number(key) expression, filled as the columns are built


def parsed(key: str, resource_fallback: bool = True) -> str:
    """number(key) as a column of its own: the alias to read it by."""
    alias = "num_" + re.sub(r"\W", "_", key) + ("" if resource_fallback else "__span")
    _PARSED[alias] = number(key, resource_fallback)
    return alias


def first_number(*keys: str) -> str:
    return f"coalesce({', '.join(parsed(k) for k in keys)})"


def first_text(*keys: str, default: str = "''") -> str:
    parts = [f"nullIf({text(k)}, '')" for k in keys]
    return f"coalesce({', '.join(parts)}, {default})"


def _uint(expr: str, bits: int) -> str:
    """A Nullable(Float64) as a Nullable UInt of `bits`, NULL when negative or not finite."""
    return f"if({expr} >= 0 AND isFinite({expr}), toUInt{bits}(least({expr}, {2 ** bits - 1})), NULL)"


def _finite(expr: str) -> str:
    return f"if(isFinite({expr}), {expr}, NULL)"


def _event(name: str) -> str:
    """Nanosecond timestamp of the first event called `name`, NULL when there is none (index 0 reads as 0)."""
    return f"nullIf(times[indexOf(names, {_q(name)})], 0)"


# A GenAI client span's time to its first chunk, in seconds: the OTel GenAI attribute, and OpenLIT's name for it
# (OpenLIT 1.44 sets gen_ai.server.time_to_first_token, with gen_ai.request.stream, on a streamed call's span)
GENAI_TTFT = ("gen_ai.response.time_to_first_chunk", "gen_ai.server.time_to_first_token")


def _genai_ttft() -> str:
    return " OR ".join(_has(k) for k in GENAI_TTFT)


def _genai_streamed() -> str:
    """A GenAI span whose first-chunk time is a first token: the OTel attribute, or OpenLIT's with
    gen_ai.request.stream true (OpenLIT sets it on a call that did not stream too, equal to the whole duration:
    there it is no first token)."""
    return (f"{_has(GENAI_TTFT[0])} OR ({_has(GENAI_TTFT[1])} "
            f"AND sa_text['gen_ai.request.stream'] IN ('true', 'True', '1'))")


def _genai_first_token() -> str:
    return (f"coalesce({_after_start(GENAI_TTFT[0])}, "
            f"if({_genai_streamed()}, {_after_start(GENAI_TTFT[1])}, NULL))")


def _after_start(seconds_key: str) -> str:
    """span start + a duration attribute in seconds (vLLM, GenAI), in ns; NULL when absent or not sane.

    TRICKY: NaN, Inf or absurd values would make the Int64 conversion fail the whole INSERT, so
    anything that is not a finite duration under ~115 days is unknown.
    """
    seconds = parsed(seconds_key, resource_fallback=False)
    return f"if(isFinite({seconds}) AND abs({seconds}) < 1e7, start_ns + toInt64(round({seconds} * 1e9)), NULL)"


def _spans_subquery(source: str) -> str:
    """One row per span. Each attribute is rendered to text once (rendered), kept beside its AnyValue branch
    (sa_kind), and every column reads those rather than copying a Tuple of AnyValue at each lookup (~10% of
    the INSERT's CPU, docs/ingest-performance.md). The resource's maps are made once per resource, before
    its spans are joined."""
    return f"""
    SELECT
        project_id, s, ss.scope.name AS scope_name, ra_kind, ra_text, resource_map,
        arrayMap(x -> x.key, s.attributes) AS sk,
        arrayMap(x -> x.value.value, s.attributes) AS kinds,
        arrayMap(x -> {_render('x.value')}, s.attributes) AS rendered,
        mapFromArrays(sk, kinds) AS sa_kind,
        mapFromArrays(sk, arrayMap((r, k) -> if(k IN ('array_value', 'kvlist_value'), '', r), rendered, kinds)) AS sa_text,
        toInt64(s.start_time_unix_nano) AS start_ns,
        toInt64(s.end_time_unix_nano) AS end_ns,
        arrayMap(e -> e.name, s.events) AS names,
        arrayMap(e -> toInt64(e.time_unix_nano), s.events) AS times
    FROM
    (
        SELECT
            project_id, rs.scope_spans AS scope_spans,
            mapFromArrays(arrayMap(x -> x.key, rs.resource.attributes), arrayMap(x -> x.value.value, rs.resource.attributes)) AS ra_kind,
            mapFromArrays(arrayMap(x -> x.key, rs.resource.attributes), arrayMap(x -> {_scalar('x.value')}, rs.resource.attributes)) AS ra_text,
            {_kv_map('rs.resource.attributes')} AS resource_map
        FROM {source}
        ARRAY JOIN resource_spans AS rs
    )
    ARRAY JOIN scope_spans AS ss
    ARRAY JOIN ss.spans AS s"""


def _form() -> str:
    """The form a span came in (docs/sending-traces.md "5. Other accepted forms"); '' for none of them.

    Third-party client spans are recognised with or without their streaming signals, so a non-streaming
    call of OpenInference or OpenLLMetry is an attempt of that form too. The OTel GenAI check comes last:
    OpenLLMetry also sets gen_ai.operation.name and gen_ai.provider.name.
    """
    native = f"hasAny(names, [{', '.join(_q(e) for e in NATIVE_EVENTS)}])"
    vllm = " OR ".join(_has(f"gen_ai.latency.{k}") for k in ("time_to_first_token", "e2e", "time_in_queue"))
    openllmetry = f"has(names, {_q(CHUNK_EVENT)}) OR {_has('gen_ai.is_streaming')} OR {_has('llm.is_streaming')}"
    # string attributes by their conventions: compared raw, which keeps this per-span test cheap
    # only a string renders as these texts (bytes render as hex digits, bools as true/false)
    openinference = f"has(names, {_q(FIRST_TOKEN_EVENT)}) OR sa_text['openinference.span.kind'] = 'LLM'"
    genai_call = (
        f"sa_text['gen_ai.operation.name'] IN ({', '.join(_q(o) for o in GENAI_OPERATIONS)}) "
        f"AND ({_has('gen_ai.provider.name')} OR {_has('gen_ai.system')})"
    )
    return (
        f"multiIf({native}, 'native', {vllm}, 'vllm', {_genai_ttft()}, 'genai', "
        f"{openllmetry}, 'openllmetry', {openinference}, 'openinference', {genai_call}, 'genai', '')"
    )


def _instants() -> dict[str, str]:
    """The five instants in ns (Nullable Int64), per form, as docs/span-convention.md defines them.

    Client-side forms (genai, openllmetry, openinference, and attempts in no form) cannot see a queue:
    their admitted_at is NULL, so t_queue (and t_first_token, which starts at admission) is not measured.
    A streaming span of OpenInference or of the OTel GenAI form ends when the client has read the last
    chunk, so its end is the last token; a non-streaming call has neither token instant.
    """
    chunk_times = f"arrayFilter((t, n) -> n = {_q(CHUNK_EVENT)}, times, names)"
    streamed_openinference = f"has(names, {_q(FIRST_TOKEN_EVENT)})"
    return {
        "queued_ns": f"multiIf(form = 'native', coalesce({_event('queued')}, start_ns), role = 'attempt', start_ns, NULL)",
        "admitted_ns": (
            # no `admitted` event: unknown (t_queue not measured), never queued_ns (a queue of 0)
            f"multiIf(form = 'native', {_event('admitted')}, "
            f"form = 'vllm', {_after_start('gen_ai.latency.time_in_queue')}, NULL)"
        ),
        "first_token_ns": (
            f"multiIf(form = 'native', {_event('first_token')}, "
            f"form = 'vllm', {_after_start('gen_ai.latency.time_to_first_token')}, "
            f"form = 'genai', {_genai_first_token()}, "
            f"form = 'openllmetry', nullIf(arrayMin({chunk_times}), 0), "
            f"form = 'openinference', {_event(FIRST_TOKEN_EVENT)}, NULL)"
        ),
        "last_token_ns": (
            f"multiIf(form = 'native', {_event('last_token')}, form = 'vllm', {_after_start('gen_ai.latency.e2e')}, "
            f"form = 'genai' AND ({_genai_streamed()}), end_ns, "
            f"form = 'openllmetry', nullIf(arrayMax({chunk_times}), 0), "
            f"form = 'openinference' AND {streamed_openinference}, end_ns, NULL)"
        ),
        "released_ns": f"multiIf(form = 'native', coalesce({_event('released')}, end_ns), role = 'attempt', end_ns, NULL)",
    }


def _kv_map(kv: str) -> str:
    """Raw attributes as Map(String, String), at most {max_attributes} of them, values truncated."""
    sliced = f"arraySlice({kv}, 1, {{max_attributes:UInt32}})"
    return (
        f"mapFromArrays(arrayMap(x -> leftUTF8(toValidUTF8(x.key), 256), {sliced}), "
        f"arrayMap(x -> leftUTF8(toValidUTF8({_render('x.value')}), {{max_attribute_length:UInt32}}), {sliced}))"
    )


def _ts(ns: str) -> str:
    return f"fromUnixTimestamp64Nano({ns}, 'UTC')"


COLUMNS = {
    "project_id": "project_id",
    "trace_id": "lower(hex(s.trace_id))",
    "span_id": "lower(hex(s.span_id))",
    "parent_span_id": "lower(hex(s.parent_span_id))",
    # a run: llm.run.id, else LiteLLM's call id (shared by a failed try and its retry), else the trace
    "run_id": f"coalesce(nullIf({text('llm.run.id', 256)}, ''), nullIf({text('litellm.call_id', 256)}, ''), "
              "lower(hex(s.trace_id)))",
    "role": "role",
    "form": "form",
    "name": "leftUTF8(toValidUTF8(s.name), 512)",
    "kind": "if(s.kind BETWEEN 0 AND 5, ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'][s.kind + 1], 'unspecified')",
    "service": f"coalesce(nullIf({text('service.name', 256)}, ''), 'unknown_service')",
    "instance": text("service.instance.id", 256),
    "tenant": text("tenant.id", 256),
    "route": f"coalesce(nullIf({text('llm.route')}, ''), nullIf({text('http.route')}, ''), leftUTF8(toValidUTF8(s.name), 512))",
    "model": first_text("gen_ai.request.model", "gen_ai.response.model", "llm.model_name"),
    "stage": "stage",
    "status": "['unset', 'ok', 'error'][if(s.status.code BETWEEN 0 AND 2, s.status.code, 0) + 1]",
    "status_message": "leftUTF8(toValidUTF8(s.status.message), 1024)",
    "attempt": f"toUInt16(greatest(1, least(65535, coalesce({_finite(parsed('llm.attempt'))}, {_finite(parsed('http.request.resend_count'))} + 1, 1))))",
    "retry_cause": f"if(s.status.code = 2, {first_text('llm.retry.cause', 'error.type')}, '')",
    "connection_reused": boolean("llm.connection.reused"),
    "cap": _uint(parsed("llm.scheduler.cap"), 32),
    "input_tokens": _uint(first_number("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"), 32),
    "output_tokens": _uint(first_number("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion"), 32),
    "start_at": _ts("start_ns"),
    "end_at": _ts("end_ns"),
    "duration_ms": "(end_ns - start_ns) / 1e6",
    "queued_at": _ts("queued_ns"),
    "admitted_at": _ts("admitted_ns"),
    "first_token_at": _ts("first_token_ns"),
    "last_token_at": _ts("last_token_ns"),
    "released_at": _ts("released_ns"),
    "lifecycle_ordered": "arrayAll((a, b) -> a <= b, arrayPopBack(known), arrayPopFront(known))",
    "event_names": "arrayMap(e -> leftUTF8(toValidUTF8(e.name), 128), arraySlice(s.events, 1, 256))",
    "event_times": "arrayMap(t -> fromUnixTimestamp64Nano(t, 'UTC'), arraySlice(times, 1, 256))",
    "span_attributes": (
        "mapFromArrays(arrayMap(k -> leftUTF8(toValidUTF8(k), 256), arraySlice(sk, 1, {max_attributes:UInt32})), "
        "arrayMap(v -> leftUTF8(toValidUTF8(v), {max_attribute_length:UInt32}), arraySlice(rendered, 1, {max_attributes:UInt32})))"
    ),
    "resource_attributes": "resource_map",
    "scope_name": "leftUTF8(toValidUTF8(scope_name), 256)",
    "ingested_at": "now64(3, 'UTC')",
}


@lru_cache(maxsize=4)
def insert_sql(source: str) -> str:
    """INSERT INTO spans ... SELECT over `source` (a file() or input() table function, see writer)."""
    stage = f"lower({text('llm.stage', 64, resource_fallback=False)})"
    # TRICKY: on the span only. A resource-wide key (the instance's cap, a one-model deployment's model)
    # would otherwise turn every plain span of that service (health checks, DB calls) into an attempt.
    attempt_keys = " OR ".join(_has(k) for k in ATTEMPT_KEYS if k != MODEL_KEY)
    # TRICKY: a model name alone makes an attempt of a server or client span, not of an INTERNAL one: LiteLLM's
    # proxy (LITELLM_OTEL_V2) sets gen_ai.request.model on its `route …` and fastapi.dependencies spans, which
    # took 640 attempts of 22 ms for 200 calls of ~1.3 s
    attempt_keys += f" OR ({_has(MODEL_KEY)} AND kind != 'internal')"  # kind: the COLUMNS alias, by name
    instants = _instants()
    inner = ",\n        ".join(f"{expr} AS {name}" for name, expr in instants.items())
    numbers = ",\n            ".join(f"{expr} AS {alias}" for alias, expr in sorted(_PARSED.items()))  # COLUMNS' and instants'
    return f"""INSERT INTO spans ({', '.join(COLUMNS)})
SELECT {', '.join(f'{expr} AS {name}' for name, expr in COLUMNS.items())}
FROM
(
    SELECT *,
        {inner},
        arrayFilter(x -> isNotNull(x), [queued_ns, admitted_ns, first_token_ns, last_token_ns, released_ns]) AS known
    FROM
    (
        SELECT *,
            {_form()} AS form,
            {stage} AS stage,
            multiIf({_has('llm.stage')}, 'stage', form != '' OR {attempt_keys}, 'attempt', 'other') AS role,
            {numbers}
        FROM ({_spans_subquery(source)})
    )
)"""
