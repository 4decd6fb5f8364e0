"""Cardinality guards: per project and hour, at most N distinct services, routes, tenants and instances.

A span whose value is past its project's limit is stored with the value `__other__` instead, never
dropped: `fold` rewrites the decoded request before it goes to the spool, the request's partial_success
says how many spans were folded, and the ingest status counts them. The limits are the project's (admin)
or the settings' INGEST_MAX_*_PER_HOUR, read through ingest.limits (cached 5 s).

Values are the ones the mapping stores (ingest/mapping.py COLUMNS): an attribute on the span, else the
same key on the resource; the route is llm.route, else http.route, else the span name. A value already
seen this hour stays accepted; an absent or empty value is never counted or folded.
"""
import itertools
import threading
import time
from collections import Counter
from datetime import datetime, timezone
from itertools import chain
from operator import attrgetter, methodcaller

from ingest.limits import DIMENSIONS, project_limits
from ingest.otlp_proto import AttributeView, LenientAnyValue, LenientRequest

OTHER = "__other__"
SINGULAR = {"services": "a service", "routes": "a route", "tenants": "a tenant", "instances": "an instance"}
# the attribute keys each dimension is read from, in order, and the width the mapping stores
KEYS = {"services": ("service.name",), "routes": ("llm.route", "http.route"),
        "tenants": ("tenant.id",), "instances": ("service.instance.id",)}
WIDTH = {"services": 256, "routes": 512, "tenants": 256, "instances": 256}
ALL_KEYS = tuple(k for keys in KEYS.values() for k in keys)
# attribute key (str, or bytes in a LenientRequest) -> its place in ALL_KEYS
_INDEX = {k: j for j, k in enumerate(ALL_KEYS)} | {k.encode(): j for j, k in enumerate(ALL_KEYS)}
_SPANS, _ATTRIBUTES, _NAME = attrgetter("spans"), attrgetter("attributes"), attrgetter("name")
_GETS = tuple(methodcaller("get", key) for key in ALL_KEYS)  # an AttributeView map's value of each key


class Tracker:
    """The distinct values seen this hour per project and dimension, and the spans folded, in this process.

    TRICKY: the sets live in this process, like the rate buckets (ingest/limits.py): each receiving process
    (the web server for OTLP/HTTP, `serve_otlp_grpc`) allows up to the limit on its own, so a project sending
    to several processes may store up to the limit in each. This is a documented approximation; sharing the
    sets would cost a round trip per request. A set never holds more than its limit, so the memory is bounded
    by the limits (an unlimited dimension is not tracked at all). `clock` (Unix seconds) is injectable.
    """

    def __init__(self, clock=time.time):
        self.clock = clock
        self.lock = threading.Lock()
        self.hour: int | None = None
        self.seen: dict[tuple[int, str], set[str]] = {}  # (project id, dimension) -> values this hour
        self.folded: dict[int, Counter] = {}  # project id -> dimension -> spans, since `since`
        self.since = datetime.now(timezone.utc)

    def _current(self) -> None:
        """Start over when the hour changed (called under the lock)."""
        hour = int(self.clock() // 3600)
        if hour != self.hour:
            self.hour, self.seen = hour, {}

    def admit(self, project_id: int, dimension: str, value: str, limit: int) -> bool:
        """True when `value` may be stored as it is: seen this hour, or the project's set has room."""
        with self.lock:
            self._current()
            values = self.seen.setdefault((project_id, dimension), set())
            if value in values:
                return True
            if len(values) >= limit:
                return False
            values.add(value)
            return True

    def count(self, project_id: int, folded: Counter) -> None:
        with self.lock:
            self.folded.setdefault(project_id, Counter()).update(folded)

    def seen_this_hour(self, project_id: int, dimension: str) -> int:
        with self.lock:
            self._current()
            return len(self.seen.get((project_id, dimension), ()))


tracker = Tracker()


def fold(project_id: int, request, body: bytes | None = None) -> tuple[Counter, list[str]]:
    """Rewrite, in a decoded ExportTraceServiceRequest (or LenientRequest), every value past the project's
    limits into __other__, where the mapping reads it (the span's attribute or the resource's; a route
    taken from the span name gets an llm.route attribute). `body`, when given, is `request` serialized:
    its attributes are then read through AttributeView, several times faster.

    Returns (spans folded per dimension, partial_success warnings); (empty, []) when nothing was folded,
    and then `request` is unchanged. A request refused later (429) has still made its new values seen.
    """
    limits = project_limits(project_id)
    caps = {d: getattr(limits, f"{d}_per_hour") for d in DIMENSIONS if getattr(limits, f"{d}_per_hour")}
    if not caps:
        return Counter(), []
    other = OTHER.encode() if isinstance(request, LenientRequest) else OTHER
    admission, folded = _Admission(project_id, caps), Counter()
    actions: dict[tuple, tuple] = {}  # the same values on the same resource: the same folds
    for r, (rs, view) in enumerate(zip(request.resource_spans, _views(request, body))):
        # TRICKY: read before any span is folded; a rewrite of the resource then leaves these values alone
        resource_view = None if view is None else view.resource
        resource, rewritten = dict(zip(ALL_KEYS, _looked_up(rs.resource.attributes, resource_view))), set()
        if view is not None and admission.admits_all(rs, view, resource):
            continue  # nothing of this resource's spans is past a limit: nothing to rewrite
        for ss, view_ss in zip(rs.scope_spans, _NONE if view is None else view.scope_spans):
            for span, view_span in zip(ss.spans, _NONE if view_ss is None else view_ss.spans):
                own, name = _looked_up(span.attributes, view_span), span.name
                todo = actions.get((r, own, name))
                if todo is None:
                    todo = actions[r, own, name] = admission.folds(dict(zip(ALL_KEYS, own)), resource, name)
                for dimension, key, on_span in todo:
                    folded[dimension] += 1
                    if on_span:
                        _rewrite(span.attributes, key, other)
                    elif key not in rewritten:  # the resource's value: once for all its spans
                        _rewrite(rs.resource.attributes, key, other)
                        rewritten.add(key)
    return folded, [f"{folded[d]} span(s) had {SINGULAR[d]} past the project's limit of {caps[d]} per hour; "
                    f"stored as {OTHER}" for d in DIMENSIONS if folded[d]]


def count_folded(project_id: int, folded: Counter) -> None:
    """Count spans stored as __other__ for the project (per dimension), once they are in the spool."""
    if folded:
        tracker.count(project_id, folded)


def status(project_id: int) -> dict:
    """{"since": iso, dimension: {"limit", "seen_this_hour", "folded_spans"}} for the ingest status.

    limit 0 = no limit, and then seen_this_hour is None (not tracked); folded_spans counts since `since`
    (this process's start).
    """
    limits = project_limits(project_id)
    with tracker.lock:
        folded = Counter(tracker.folded.get(project_id, ()))
    out = {"since": tracker.since.isoformat()}
    for dimension in DIMENSIONS:
        limit = getattr(limits, f"{dimension}_per_hour")
        seen = tracker.seen_this_hour(project_id, dimension) if limit else None
        out[dimension] = {"limit": limit, "seen_this_hour": seen, "folded_spans": folded[dimension]}
    return out


class _Admission:
    """One request's decisions: the tracker is asked once per distinct value, each AnyValue read once."""

    def __init__(self, project_id: int, caps: dict[str, int]):
        self.project_id, self.caps = project_id, caps
        self.decided: dict[tuple[str, str], bool] = {}
        self.texts: dict[bytes, str] = {}

    def folds(self, own: dict, resource: dict, name) -> tuple[tuple[str, str, bool], ...]:
        """(dimension, key, on the span) for each value of a span past its limit.

        `own` and `resource` map ALL_KEYS to serialized AnyValues (None: absent). An attribute without a
        value (an empty AnyValue) counts as absent, so the mapping reads the resource's.
        """
        out = []
        for dimension in self.caps:
            value, key, on_span = self.value_of(dimension, tuple(own[k] for k in KEYS[dimension]), resource)
            if not value and dimension == "routes":  # the mapping falls back to the span name
                value, key, on_span = _text(name), "llm.route", True
            if not self.admitted(dimension, value[:WIDTH[dimension]]):
                out.append((dimension, key, on_span))
        return tuple(out)

    def value_of(self, dimension: str, own: tuple, resource: dict) -> tuple[str, str, bool]:
        """(text, key, on the span) of the dimension's value as the mapping reads it, from the span's serialized
        AnyValues of KEYS[dimension] (`own`, in that order) and the resource's; "" when none has one."""
        value, key, on_span = "", "", False
        for key, raw in zip(KEYS[dimension], own):
            on_span = bool(raw)
            value = self.text(raw if on_span else resource[key])
            if value:
                break
        return value, key, on_span

    def admits_all(self, rs, view, resource: dict) -> bool:
        """True when every value of the resource's spans is admitted, decided per distinct value: the spans are
        read column by column through the AttributeView (map lookups in C), no Python work a span. False when
        a value is past its limit, or a span repeats a key (its map then holds the last value, the mapping reads
        the first): the caller then goes span by span, with the decisions taken here.

        TRICKY: each dimension's distinct values are decided in the order of their first span, as the span by
        span path would (dimensions have separate sets, so which values a full set admits stays the same).
        """
        spans = list(chain.from_iterable(map(_SPANS, view.scope_spans)))
        maps = list(map(_ATTRIBUTES, spans))
        strict = chain.from_iterable(map(_SPANS, rs.scope_spans))
        if list(map(len, maps)) != list(map(len, map(_ATTRIBUTES, strict))):
            return False
        columns = {key: list(map(get, maps)) for key, get in zip(ALL_KEYS, _GETS)}
        for dimension in self.caps:
            own = [columns[key] for key in KEYS[dimension]]
            combos = dict.fromkeys(zip(*own))
            named = dimension == "routes" and not all(self.value_of(dimension, c, resource)[0] for c in combos)
            if named:  # some span's route is its name: decide (values, name) in span order
                combos = dict.fromkeys(zip(*own, map(_NAME, spans)))
            for combo in combos:
                value = self.value_of(dimension, combo[:len(own)], resource)[0]
                if not value and named:
                    value = _text(combo[-1])
                if not self.admitted(dimension, value[:WIDTH[dimension]]):
                    return False
        return True

    def admitted(self, dimension: str, value: str) -> bool:
        if not value or value == OTHER:
            return True
        hit = self.decided.get((dimension, value))
        if hit is None:
            hit = tracker.admit(self.project_id, dimension, value, self.caps[dimension])
            self.decided[dimension, value] = hit
        return hit

    def text(self, raw: bytes | None) -> str:
        """A serialized AnyValue as text, roughly as mapping._render does (exactness matters only for telling
        values apart): strings, numbers, true/false, bytes in hex; arrays and kvlists ""."""
        if not raw:
            return ""
        hit = self.texts.get(raw)
        if hit is None:
            value = LenientAnyValue.FromString(raw)
            kind = value.WhichOneof("value")
            if kind == "string_value":
                hit = _text(value.string_value)
            elif kind == "bool_value":
                hit = "true" if value.bool_value else "false"
            elif kind == "bytes_value":
                hit = value.bytes_value.hex()
            else:
                hit = str(getattr(value, kind)) if kind in ("int_value", "double_value") else ""
            self.texts[raw] = hit
        return hit


def _text(value: str | bytes) -> str:
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


_NONE = itertools.repeat(None)


def _views(request, body: bytes | None):
    """Each resource's AttributeView (None for all where there is no body or it holds bytes-typed strings)."""
    if body is None or isinstance(request, LenientRequest):
        return _NONE
    try:
        return AttributeView.FromString(body).resource_spans
    except Exception:  # noqa: BLE001 -- bytes the strict parser took; the slow path reads them instead
        return _NONE


def _looked_up(attributes, view) -> tuple:
    """_first(attributes), looked up in the view's map when it has one entry per attribute (no key repeated)."""
    if view is None or len(view.attributes) != len(attributes):
        return _first(attributes)
    return tuple(map(view.attributes.get, ALL_KEYS))


def _first(attributes) -> tuple:
    """The serialized AnyValue of the first of each of ALL_KEYS in `attributes` (None: absent), the one
    ClickHouse reads when a key is repeated.

    TRICKY: this loop over every attribute costs ~5 us per span of 15 attributes, about as much as decoding
    it, so it is only the slow path of _looked_up (a repeated key, a LenientRequest); everything after it is
    cached per request.
    """
    found = [None] * len(ALL_KEYS)
    for kv in attributes:
        j = _INDEX.get(kv.key)
        if j is not None and found[j] is None:
            found[j] = kv.value.SerializeToString()
    return tuple(found)


def _rewrite(attributes, key: str, other) -> None:
    """Every `key` in `attributes` set to __other__; added when there is none."""
    hit = False
    for kv in attributes:
        if _text(kv.key) == key:
            kv.value.string_value = other
            hit = True
    if not hit:
        added = attributes.add()
        added.key = key if isinstance(other, str) else key.encode()
        added.value.string_value = other
