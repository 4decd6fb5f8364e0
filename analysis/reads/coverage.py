"""Measurement coverage: for one service window, which buckets and signals its spans give, for what share of the
attempts, and why not for the rest (which span form, which event or attribute is missing).

A value the spans cannot give is NULL in request_buckets (README "What it measures"), so "measured" is simply
"known"; the form column (ingest/mapping.py's forms) says where the unmeasured attempts came from. The diagnosis
API returns this as "coverage", and every dashboard page shows it as a strip of chips (dashboard/access.Page).
"""
from analysis import stats
from analysis.buckets import ALL
from analysis.reads import queries, versions
from analysis.scope import Scope

# What each share is over: a failed attempt may end before a first token, so first-token buckets are over the
# successful attempts; t_retry exists on a run's final attempt only.
BUCKET_BASIS = {"t_queue": "attempts", "t_conn": "attempts", "t_first_token": "successes", "t_stream": "successes",
                "t_post": "successes", "t_retry": "runs", "ttft": "successes", "total": "attempts"}
# signal -> (coverage_counts column, basis)
SIGNALS = {"queue": ("t_queue", "attempts"), "connections": ("connections", "attempts"), "retries": ("t_retry", "runs"),
           "cap": ("cap", "attempts"), "tokens": ("tokens", "successes"), "stages": ("stages", "attempts")}
LABELS = {"ttft": "TTFT", "cap": "scheduler cap", "stages": "stage spans"}
BASIS_WORDS = {"attempts": "attempts", "successes": "successful attempts", "runs": "runs"}

_CLIENT = "a client span: the server's admission queue is not visible to it"
_NO_RUN = ("no `llm.run.id`, `llm.attempt` or `http.request.resend_count`, and no HTTP client child spans: which "
           "attempts are tries of one request is unknowable")
# A client span may hold the client's own retries (the openai client retries twice by default); its HTTP client
# children, when instrumented, show them (analysis/sql/materialize_request_buckets.sql)
_HIDDEN = ("retries inside one client span are not visible: no HTTP client child spans (add the httpx, requests or "
           "aiohttp instrumentation) and no `llm.run.id` / `llm.attempt`")
HIDDEN_RETRY_FORMS = ("genai", "openllmetry", "openinference")  # the client span forms
# Why a client span has no first token. A stream flag is no first token: LiteLLM's v1 spans say
# `llm.is_streaming` True and record none, so the hint names both cases and the setting that records one.
_NO_FIRST_CHUNK = ("no `gen_ai.response.time_to_first_chunk` and no `first_token` event: a call that did not stream, or "
                   "an instrumentation that records neither a first chunk nor whether the call streamed (the official "
                   "openai-v2 2.4b0, LangChain's); OpenLLMetry's and OpenInference's openai instrumentations record it, "
                   "and LiteLLM with `LITELLM_OTEL_V2=true`")
_NO_CHUNKS = ("no `gen_ai.content.completion.chunk` events: a call that did not stream, or a streamed one whose "
              "instrumentation records no chunks (LiteLLM's `otel` callback sets `llm.is_streaming` but records no "
              "first token: `LITELLM_OTEL_V2=true` records `gen_ai.response.time_to_first_chunk`)")
_NO_CONN = "no `llm.connection.reused` (or a new connection without a `connect` stage span)"
# coverage_counts column -> span form -> why an attempt of that form has no value; "*": any other form.
# Form "" is an attempt known by its attributes only (no lifecycle events, no latency attributes).
REASONS: dict[str, dict[str, str]] = {
    "t_queue": {"native": "no `admitted` event", "vllm": "no `gen_ai.latency.time_in_queue`",
                "genai": _CLIENT, "openllmetry": _CLIENT, "openinference": _CLIENT,
                "*": "no `queued` / `admitted` events"},
    "t_conn": {"vllm": "a server-side span says nothing about client connections", "*": _NO_CONN},
    "t_first_token": {"native": "no `admitted` or `first_token` event",
                      "vllm": "no `gen_ai.latency.time_in_queue` or `gen_ai.latency.time_to_first_token`",
                      "genai": _CLIENT + " (prefill cannot be told from queueing)",
                      "openllmetry": _CLIENT + " (prefill cannot be told from queueing)",
                      "openinference": _CLIENT + " (prefill cannot be told from queueing)",
                      "*": "no `admitted` and `first_token` events"},
    "ttft": {"native": "no `first_token` event", "vllm": "no `gen_ai.latency.time_to_first_token`",
             "genai": _NO_FIRST_CHUNK, "openllmetry": _NO_CHUNKS,
             "openinference": "no `First Token Stream Event` (a non-streaming call?)",
             "*": "no `gen_ai.response.time_to_first_chunk` and no `first_token` event"},
    "t_stream": {"native": "no `first_token` or `last_token` event",
                 "vllm": "no `gen_ai.latency.time_to_first_token` or `gen_ai.latency.e2e`",
                 "genai": "no `gen_ai.response.time_to_first_chunk`",
                 "openllmetry": _NO_CHUNKS,
                 "openinference": "no last-token instant in this form",
                 "*": "no `first_token` / `last_token` events"},
    "t_post": {"native": "no `last_token` event", "vllm": "no `gen_ai.latency.e2e`",
               "openinference": "no last-token instant in this form", "*": "no `last_token` event"},
    "t_retry": {**{form: _HIDDEN for form in HIDDEN_RETRY_FORMS}, "*": _NO_RUN},
    "total": {"*": "lifecycle events out of order"},
    "connections": {"vllm": "a server-side span says nothing about client connections",
                    "*": "no `llm.connection.reused` attribute"},
    "cap": {"*": "no `llm.scheduler.cap` attribute"},
    "tokens": {"*": "no `gen_ai.usage.input_tokens` / `gen_ai.usage.output_tokens` (or `llm.token_count.*`)"},
    "stages": {"*": "no stage spans (`llm.stage`: tokenize, prompt_build, policy, network, post)"},
}


def hidden_retry_runs(cov: dict) -> int:
    """How many of the coverage's runs are client spans whose retries are not visible (t_retry unknown, form one of
    HIDDEN_RETRY_FORMS): the client's own retries may hide inside them. 0 when there are none."""
    return sum(g["count"] for g in cov["signals"]["retries"]["unmeasured"] if g["form"] in HIDDEN_RETRY_FORMS)


def coverage(scope: Scope) -> dict:
    """The coverage of the scope's attempts (optionally one route / tenant): see shape(). Kept while the window's
    data is unchanged (versions.kept): every service page shows it."""
    return versions.kept("coverage", scope, (), lambda s: shape(queries.coverage_counts(s)))


def shape(rows: list[dict]) -> dict:
    """{"attempts", "runs", "successes", "forms": {form: attempts}, "buckets": {bucket: entry}, "signals":
    {signal: entry}} from queries.coverage_counts' rows; entry() gives each entry. Without rows every share is
    None (nothing to measure), not 0."""
    totals = {basis: sum(r[basis] for r in rows) for basis in BASIS_WORDS}
    return {**totals, "forms": {r["form"]: r["attempts"] for r in rows},
            "buckets": {b: entry(rows, b, b, BUCKET_BASIS[b]) for b in ALL},
            "signals": {s: entry(rows, s, column, basis) for s, (column, basis) in SIGNALS.items()}}


def entry(rows: list[dict], name: str, column: str, basis: str) -> dict:
    """{"label", "measured", "of", "basis", "share" (0..1, None when `of` is 0), "text" ("50 %", "not measured",
    "–"), "unmeasured": [{"form", "count", "reason"}], "note": one line saying it all}."""
    measured, of = sum(r[column] for r in rows), sum(r[basis] for r in rows)
    gaps = [{"form": r["form"], "count": r[basis] - r[column], "reason": reason(column, r["form"])}
            for r in rows if r[basis] > r[column]]
    share = stats.ratio(measured, of)
    label = LABELS.get(name, name)
    return {"label": label, "measured": measured, "of": of, "basis": basis, "share": share, "text": percent(share),
            "unmeasured": gaps, "note": note(label, measured, of, basis, gaps)}


def reason(column: str, form: str) -> str:
    """Why an attempt of `form` has no value in `column`."""
    texts = REASONS[column]
    return texts.get(form, texts["*"])


def percent(share: float | None) -> str:
    """0..1 as "37 %"; never "0 %" for a few measured nor "100 %" for a few missing; "–" for None."""
    if share is None:
        return "–"
    pct = round(share * 100)
    if share > 0 and pct == 0:
        return "<1 %"
    if share < 1 and pct == 100:
        return ">99 %"
    return f"{pct} %"


def form_name(form: str) -> str:
    return f"form {form}" if form else "attributes only (no lifecycle events or latency attributes)"


def note(label: str, measured: int, of: int, basis: str, gaps: list[dict]) -> str:
    """"t_first_token: 0 % of 200 successful attempts measured — form genai (200): no ..." (the chip's title)."""
    if not of:
        return f"{label}: no {BASIS_WORDS[basis]} in this window"
    head = f"{label}: {percent(measured / of)} of {of} {BASIS_WORDS[basis]} measured"
    why = "; ".join(f"{form_name(g['form'])} ({g['count']}): {g['reason']}" for g in gaps)
    return f"{head} — {why}" if why else head

