"""How detection depends on where minute boundaries fall; not part of the suite (its name is no test_*.py):

    DATABASE_URL=... .venv/bin/python -m pytest -n 0 -q -s tests/analysis/measure_incident_alignment.py

Each case (the simulator's overlays as test_incident_accuracy.py sends them, 5 requests/s; each preset switched on
between healthy stretches as test_incident_detection.py sends them, 2 requests/s; steady services) is sent once
through the real SDK, ingest and materialize path. Its attempts are then read back and detection.detect is run on
the per-minute series recomputed in Python (p95 as quantileExactInclusive: numpy's linear) with the minute
boundaries moved by 0, STEP, ... 57 s: the same traffic as if it had arrived at another second of the minute, which
is all that changes between two runs of a test with a fixed seed. A case-alignment is wrong unless exactly one
incident is found with onset within 120 s and end within 300 s (none for a steady service). Results per case go to
MEASURE_OUT (JSON); the totals are printed.
"""
import json
import os
import pickle
from datetime import timedelta, timezone

import numpy as np

from analysis import buckets
from analysis.diagnosis.thresholds import configured
from analysis.incidents.baseline import Chooser
from analysis.incidents.detection import MAX_SLICES, SLICE_LEVEL, SLICES, detect, keep_slices
from simulator.scenarios import PRESETS
from store import client
from tests.analysis.incident_traffic import phases
from tests.analysis.test_incident_accuracy import CAUSES as OVERLAID
from tests.analysis.test_incident_accuracy import SCOPED
from tests.analysis.test_incident_detection import CAUSES as SWITCHED
from tests.analysis.test_incident_detection import STEADY, T0, preset
from tests.simulated import send_simulated

SEEDS = [int(s) for s in os.environ.get("MEASURE_SEEDS", "7,21").split(",")]
STEP = int(os.environ.get("MEASURE_STEP", "3"))
OUT = os.environ.get("MEASURE_OUT", "/tmp/incident_alignment.json")
DUMP = os.environ.get("MEASURE_DUMP")  # a path: the cases' attempts are pickled there
ONLY_SCOPED = [spec for spec in os.environ.get("MEASURE_SCOPED", "").split(";") if spec]
COLUMNS = ", ".join(f"{m}_ms" for m in buckets.ALL)


def _overlaid(project, key, seed):
    """(service, onset, end) of one test_incident_accuracy-style case per overlay, scope and steady preset; with
    MEASURE_SCOPED (specs separated by ";", {service} for the service's name) only those scoped cases."""
    base = PRESETS["healthy"]
    if ONLY_SCOPED:
        for k, spec in enumerate(ONLY_SCOPED):
            service = f"only-{k}-{seed}"
            injected = send_simulated(project, key, base=base, duration="45m", incidents=[spec.format(service=service)],
                                      seed=seed, service=service).incidents[0]
            yield service, spec, injected.onset, injected.end
        return
    cases = [(f"svc-{c}-{seed}", f"{c}@22m+15m", base.with_(rps=2.0) if c == "decode_throughput" else base)
             for c in OVERLAID]
    cases += [(f"scoped-{k}-{seed}", spec.format(service=f"scoped-{k}-{seed}"), base) for k, spec in enumerate(SCOPED)]
    for service, spec, scenario in cases:
        injected = send_simulated(project, key, base=scenario, duration="45m", incidents=[spec], seed=seed,
                                  service=service).incidents[0]
        yield service, spec, injected.onset, injected.end
    for name in ("healthy", "steady_slow"):
        send_simulated(project, key, base=PRESETS[name].at_rps(min(2.0, PRESETS[name].rps)), duration="50m",
                       seed=seed, service=f"steady-{name}-{seed}")
        yield f"steady-{name}-{seed}", "steady", None, None


def _switched(project, key, seed):
    """(service, onset, end) of one test_incident_detection-style case per preset, and the steady ones."""
    for i, cause in enumerate(dict.fromkeys([*SWITCHED, *STEADY])):  # steady_slow is in both
        service = f"phases-{cause}-{seed}"
        if cause in STEADY:
            phases(project, key, service, [(preset(cause), 45)], T0, seed=seed + i)
            yield service, "steady", None, None
        else:
            marks = phases(project, key, service, [(preset("healthy"), 20), (preset(cause), 12),
                                                   (preset("healthy"), 8)], T0, seed=seed + i)
            yield service, cause, marks[1], marks[2]


def _series(rows, offset: int) -> list[dict]:
    minutes: dict = {}
    for row in rows:
        minutes.setdefault((row[0] + timedelta(seconds=offset)).replace(second=0, microsecond=0), []).append(row)
    out = []
    for at in sorted(minutes):
        point = {"at": at, "attempts": len(minutes[at]), "errors": 0}
        for i, metric in enumerate(buckets.ALL):
            known = [r[2 + i] for r in minutes[at] if r[2 + i] is not None]
            point[metric] = {"count": len(known), "p50": float(np.percentile(known, 50)) if known else None,
                             "p95": float(np.percentile(known, 95)) if known else None}
        out.append(point)
    return out


def _detect(points, th, level="p95"):
    chooser = Chooser(points, [], lambda at: False, 3, th.incident_min_attempts, th.incident_baseline_minutes)
    return detect(points, points[0]["at"], points[-1]["at"] + timedelta(minutes=1), chooser, th, level).incidents


def judged_slices(points: dict, th) -> list[tuple[str, str]]:
    """The slices of `points` ({(dimension, value): series}, every value of each dimension) the minute job judges:
    the rule of analysis/sql/incident_series_slices.sql, which applies it in the store, for the series this measure
    computes itself (of a dimension with two values or more, those with enough busy minutes for a baseline, at most
    MAX_SLICES a dimension, busiest first)."""
    out = []
    for dimension in SLICES:
        values = [key for key in points if key[0] == dimension]
        if len(values) < 2:
            continue
        busy = {key: sum(1 for p in points[key] if p["attempts"] >= th.incident_min_attempts) for key in values}
        ranked = sorted((key for key in values if busy[key] >= th.incident_baseline_minutes),
                        key=lambda key: (-sum(p["attempts"] for p in points[key]), key))
        out += ranked[:MAX_SLICES]
    return out


def _judge(rows, onset, end, th) -> list:
    """The offsets judged wrong, with what was found there (the whole service's incidents and its slices' beside
    them, as jobs.detect_service keeps them). rows: (queued_at, route, buckets..., tenant, instance)."""
    wrong = []
    column = {"route": 1, "tenant": -2, "instance": -1}
    for offset in range(0, 60, STEP):
        # complete minutes only, as the minute job judges them: the first and last of a shifted series are partial
        shift = timedelta(seconds=offset)
        points = {("", ""): _series(rows, offset)[1:-1]}
        for dimension, i in column.items():
            for value in sorted({r[i] for r in rows if r[i]}):
                points[dimension, value] = _series([r for r in rows if r[i] == value], offset)[1:-1]
        whole = _detect(points["", ""], th)
        kept = keep_slices(whole, {key: _detect(points[key], th, SLICE_LEVEL) for key in judged_slices(points, th)})
        found = whole + [f for mine in kept.values() for f in mine]
        found = [(f.start - shift, f.end and f.end - shift) for f in found]
        if onset is None:
            ok = not found
        else:
            ok = (len(found) == 1 and abs((found[0][0] - onset).total_seconds()) <= 120
                  and found[0][1] is not None and abs((found[0][1] - end).total_seconds()) <= 300)
        if not ok:
            wrong.append({"offset": offset, "found": [[f[0].isoformat(), f[1] and f[1].isoformat()] for f in found]})
    return wrong


def test_measure(clickhouse, alpha):
    project, key = alpha
    th, results, dumped = configured(), [], {}
    for seed in SEEDS:
        switched = [] if ONLY_SCOPED else _switched(project, key, seed)
        for service, spec, onset, end in [*_overlaid(project, key, seed), *switched]:
            # tenant and instance last: _series reads the columns by position, a dump keeps them for offline looks
            rows = client.query_rows(f"SELECT queued_at, route, {COLUMNS}, tenant, instance FROM request_buckets FINAL "
                                     "WHERE project_id = {p:UInt32} AND service = {s:String}",
                                     parameters={"p": project.id, "s": service})
            rows = [(r[0].replace(tzinfo=timezone.utc), *r[1:]) for r in rows]
            if DUMP:
                dumped[service] = (spec, onset, end, rows)
            wrong = _judge(rows, onset, end, th)
            results.append({"service": service, "case": spec, "alignments": len(range(0, 60, STEP)), "wrong": wrong})
            print(f"{service:40s} {spec:45s} wrong {len(wrong)}", flush=True)
    with open(OUT, "w") as out:
        json.dump(results, out, indent=1)
    if DUMP:  # the attempts of every case, to judge them again offline (_judge) without sending them again
        with open(DUMP, "wb") as out:
            pickle.dump(dumped, out)
    total = sum(r["alignments"] for r in results)
    routed = sum(len(r["wrong"]) for r in results if r["case"].startswith("preprocessing@") and "route=" in r["case"])
    print(f"wrong {sum(len(r['wrong']) for r in results)} of {total} case-alignments "
          f"({routed} of them the route-scoped preprocessing case)")
