"""The figures of docs/incidents.md; not part of the suite (its name is no test_*.py): run it with

    DATABASE_URL=... .venv/bin/python -m pytest -n 1 -q tests/analysis/measure_incident_detection.py

false positives: every preset as steady traffic (its cause on all along: a steady service, however slow, is
its own baseline) for several seeds, each judged minute by minute as the minute job does; onset error: each
preset's cause switched on for 15 minutes between healthy stretches. Results go to MEASURE_OUT (a JSON file).
"""
import json
import os
import statistics
from datetime import datetime, timedelta, timezone

from analysis.incidents.jobs import detect_service
from analysis.models import Incident
from simulator.scenarios import PRESETS
from tests.analysis.incident_traffic import phases

RATE, MINUTES, SEEDS = 2.0, 60, (1, 2)
OUT = os.environ.get("MEASURE_OUT", "/tmp/incident_measure.json")
T0 = datetime(2026, 11, 10, 0, 0, tzinfo=timezone.utc)


def _steady(project, key, name, seed, began):
    service = f"{name}-{seed}"
    end = phases(project, key, service, [(PRESETS[name].at_rps(RATE), MINUTES)], began, seed=seed)[-1]
    out = detect_service(project.id, service, began, end, end + timedelta(minutes=5))
    return {"service": service, "judged": out["judged"], "no_baseline": out["no_baseline"],
            "incidents": Incident.objects.filter(project=project, service=service).count()}


def _injected(project, key, name, began):
    service = f"{name}-incident"
    healthy = PRESETS["healthy"].at_rps(RATE)
    marks = phases(project, key, service, [(healthy, 20), (PRESETS[name].at_rps(RATE), 12), (healthy, 8)], began)
    detect_service(project.id, service, began, marks[-1], marks[-1] + timedelta(minutes=5))
    found = list(Incident.objects.filter(project=project, service=service).order_by("start"))
    hit = [i for i in found if i.start < marks[2] and (i.end is None or i.end > marks[1])]
    return {"service": service, "found": len(found), "hit": bool(hit),
            "onset_error_s": abs((hit[0].start - marks[1]).total_seconds()) if hit else None,
            "end_error_s": abs((hit[0].end - marks[2]).total_seconds()) if hit and hit[0].end else None,
            "verdict": hit[0].verdict if hit else None}


def test_measure(clickhouse, alpha):
    project, key = alpha
    steady = [_steady(project, key, name, seed, T0 + timedelta(hours=2 * i))
              for i, (name, seed) in enumerate((n, s) for n in sorted(PRESETS) for s in SEEDS)]
    injected = [_injected(project, key, name, T0 + timedelta(days=1, hours=2 * i))
                for i, name in enumerate(sorted(set(PRESETS) - {"healthy"}))]
    onsets = [r["onset_error_s"] for r in injected if r["onset_error_s"] is not None]
    summary = {"judged_minutes": sum(r["judged"] - r["no_baseline"] for r in steady),
               "false_incidents": sum(r["incidents"] for r in steady),
               "recall": sum(r["hit"] for r in injected) / len(injected),
               "median_onset_error_s": statistics.median(onsets) if onsets else None,
               "steady": steady, "injected": injected}
    with open(OUT, "w") as f:
        json.dump(summary, f, indent=1, default=str)
    assert summary["judged_minutes"] > 0
