"""The run waterfall: one run's attempts and spans (analysis.reads.runs) laid out on one time axis, in ms since t0.

Feeds charts.waterfall and the run page's tables; reads nothing. One row per thing drawn: a back-off gap, an
attempt (a failed one marked with its cause), its bucket split, each of its spans; no two share a row, so a bar
never hides another and each row is drawn one bar tall (charts.waterfall sets the bar width).
"""
from analysis.buckets import STAGES
from analysis.stats import finite
from analysis.wording import duration

# Each lifecycle bucket and the instant it starts at (t_first_token starts after t_conn, see docs/span-convention.md).
LIFECYCLE = tuple(zip(STAGES, ("queued_ns", "admitted_ns", "admitted_ns", "first_token_ns", "last_token_ns")))
NS = 1_000_000


def attempt_label(a: dict) -> str:
    """'attempt 1 (error: timeout)', 'attempt 2 (ok)'."""
    if a["status"] == "error":
        return f"attempt {a['attempt']} (error{': ' + a['retry_cause'] if a['retry_cause'] else ''})"
    return f"attempt {a['attempt']} (ok)"


def _ms(ns) -> float:
    return round(ns / NS, 3)


def lifecycle(a: dict, t0: int) -> list[dict]:
    """The attempt's bucket segments [{"name", "base", "ms"}] placed on the run's time axis (ms from t0)."""
    out = []
    for name, instant in LIFECYCLE:
        ms, begin = finite(a[f"{name}_ms"]), a[instant]
        if ms is None or begin is None:
            continue
        if name == "t_first_token":
            begin += int((finite(a["t_conn_ms"]) or 0) * NS)
        out.append({"name": name, "base": _ms(begin - t0), "ms": ms})
    return out


def layout(run_attempts: list[dict], run_spans: list[dict], below: list[dict] = ()) -> dict:
    """The run laid out for the waterfall and the tables, times in ms since t0 (the first span's start).

    {"t0": ns, "attempts": [attempt + "label", "offset_ms", "duration_ms", "backoff_ms"],
     "rows": [{"label", "depth", "segments": [{"group", "base", "ms", "hover", "text"?}]}],
     "spans": [span + "owner", "attempt_no", "depth", "offset_ms", "events", "attributes"]}.
    Order: spans outside any attempt (the run's root and its stages), then per attempt: the back-off before it
    (from the end of the previous attempt), its span, its bucket split (waterfall only) and its descendant spans
    by start. An attempt of `below` (another service's attempt under a call: docs/cross-layer.md) is drawn with its
    span, then its bucket split ("engine buckets") and the time between the layers ("network"): from the call's start
    to the engine's, and from the engine's end to the call's.
    """
    t0 = min([a["start_ns"] for a in run_attempts] + [s["start_ns"] for s in run_spans])
    entries = _place(run_spans, {a["span_id"]: a["attempt"] for a in run_attempts}, t0)
    own = {e["span_id"]: e for e in entries}
    rows = [_span_row(e) for e in entries if not e["owner"]]
    table = [e for e in entries if not e["owner"]]
    out, prev_end = [], None
    for a in run_attempts:
        end = own[a["span_id"]]["end_ns"] if a["span_id"] in own else (a["released_ns"] or a["start_ns"])
        backoff = _ms(a["start_ns"] - prev_end) if prev_end is not None and a["start_ns"] > prev_end else None
        attempt = {**a, "label": attempt_label(a), "offset_ms": _ms(a["start_ns"] - t0),
                   "duration_ms": _ms(end - a["start_ns"]), "backoff_ms": backoff,
                   "backoff_base_ms": _ms(prev_end - t0) if backoff else None}
        out.append(attempt)
        prev_end = end if prev_end is None else max(prev_end, end)
        rows += _attempt_rows(attempt)
        split = [{"group": b["name"], "base": b["base"], "ms": b["ms"],
                  "hover": f"{attempt['label']}: {b['name']} {duration(b['ms'])} at +{duration(b['base'])}"}
                 for b in lifecycle(a, t0)]
        if split:
            rows.append({"label": "buckets", "depth": 1, "segments": split})
        children = [e for e in entries if e["owner"] == a["span_id"] and e["span_id"] != a["span_id"]]
        engines = {b["span_id"]: b for b in below}
        for e in children:
            rows.append(_span_row(e))
            if e["span_id"] in engines:
                rows += _layer_rows(attempt, own.get(a["span_id"]), e, engines[e["span_id"]], t0)
        table += ([own[a["span_id"]]] if a["span_id"] in own else []) + children
    return {"t0": t0, "attempts": out, "rows": rows, "spans": table}


def _place(run_spans: list[dict], attempt_nos: dict, t0: int) -> list[dict]:
    """Each span with the attempt it belongs to (its own, or its nearest attempt ancestor's; "" for none), its
    depth below that attempt (or below the trace root), its offset, events and attributes."""
    by_id = {s["span_id"]: s for s in run_spans}

    def owner(s):
        depth, cur, seen = 0, s, set()
        while cur["span_id"] not in attempt_nos and cur["parent_span_id"] in by_id and cur["span_id"] not in seen:
            seen.add(cur["span_id"])
            cur, depth = by_id[cur["parent_span_id"]], depth + 1
        return (cur["span_id"], depth) if cur["span_id"] in attempt_nos else ("", depth)

    out = []
    for s in run_spans:
        aid, depth = owner(s)
        out.append({**s, "owner": aid, "attempt_no": attempt_nos.get(aid), "depth": depth, "indent": "·" * depth,
                    "offset_ms": _ms(s["start_ns"] - t0), "duration_ms": _ms(s["end_ns"] - s["start_ns"]),
                    "events": [(n, _ms(t - s["start_ns"])) for n, t in zip(s["event_names"], s["event_ns"])],
                    "attributes": sorted(s["span_attributes"].items())})
    return sorted(out, key=lambda e: (e["start_ns"], e["depth"]))  # a parent before a child starting with it


def _attempt_rows(a: dict) -> list[dict]:
    """The back-off row before the attempt (when it waited), then the attempt's own row; a failed attempt's bar
    carries its cause as text, so it reads as failed without hovering."""
    rows = []
    if a["backoff_ms"]:
        rows.append({"label": f"back-off before attempt {a['attempt']}", "depth": 0, "segments": [{
            "group": "retry back-off", "base": a["backoff_base_ms"], "ms": a["backoff_ms"],
            "hover": f"retry back-off before {a['label']}: {duration(a['backoff_ms'])}"}]})
    bar = {"group": "attempt", "base": a["offset_ms"], "ms": a["duration_ms"],
           "hover": f"{a['label']} on {a['instance'] or a['service']}: {duration(a['duration_ms'])} "
                    f"at +{duration(a['offset_ms'])}"}
    if a["status"] == "error":
        bar.update(group="failed attempt", text=f"failed: {a['retry_cause'] or 'error'}")
    return rows + [{"label": a["label"], "depth": 0, "segments": [bar]}]


def _span_row(e: dict) -> dict:
    kind = e["stage"] or e["role"]
    group = f"stage {e['stage']}" if e["stage"] else ("failed span" if e["status"] == "error" else "other span")
    return {"label": e["name"], "depth": e["depth"], "segments": [{
        "group": group, "base": e["offset_ms"], "ms": e["duration_ms"],
        "hover": f"{e['name']} ({kind}): {duration(e['duration_ms'])} at +{duration(e['offset_ms'])}"}]}


def _layer_rows(call: dict, call_span: dict | None, span: dict, engine: dict, t0: int) -> list[dict]:
    """Beneath an engine's attempt span under a call: its bucket split, and the network between the layers."""
    split = [{"group": b["name"], "base": b["base"], "ms": b["ms"],
              "hover": f"{engine['service']}: {b['name']} {duration(b['ms'])} at +{duration(b['base'])}"}
             for b in lifecycle(engine, t0)]
    rows = [{"label": f"{engine['service']} buckets", "depth": span["depth"] + 1, "segments": split}] if split else []
    if call_span is None:
        return rows
    gaps = [(call["start_ns"], span["start_ns"]), (span["end_ns"], call_span["end_ns"])]
    network = [{"group": "network (between layers)", "base": _ms(lo - t0), "ms": _ms(hi - lo),
                "hover": f"between {call['service']} and {engine['service']}: {duration(_ms(hi - lo))} "
                         f"at +{duration(_ms(lo - t0))}"} for lo, hi in gaps if hi > lo]
    if network:
        rows.append({"label": "network", "depth": span["depth"] + 1, "segments": network})
    return rows
