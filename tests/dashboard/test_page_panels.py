"""The Diagnosis, Runs, Service map and SLOs pages draw their panels' numbers (analysis/panels/): for the same scope,
build() gives what the page shows."""
import json
from datetime import timedelta

import pytest

from analysis.models import WindowDiagnosis
from analysis.panels import diagnosis, runs, service_map, slos
from analysis.rollups.materialize import materialize
from analysis.scope import Scope
from analysis.wording import fmt
from slos.models import Slo
from tests import factories as f
from tests.analysis.test_layers import ENGINE, GATEWAY, request_path
from tests.dashboard.conftest import END, START, WINDOW
from tests.dashboard.pages import table

pytestmark = pytest.mark.django_db


def test_the_diagnosis_page_shows_the_panels_answer(ann_client, traffic):
    found = diagnosis.build(Scope(traffic["alpha"].pk, "alpha-svc", START, END))
    # the conftest traffic: 40 one-attempt runs (no run id: each its own trace)
    assert (found.error, found.evidence["requests"], found.evidence["retries"]["runs"]) == (None, 40, 40)
    body = ann_client.get("/diagnosis/", {"project": "alpha", "service": "alpha-svc", **WINDOW}).content.decode()
    assert f'data-verdict="{found.verdict}"' in body and '<b id="runs">40</b>' in body
    stored = WindowDiagnosis.objects.create(project=traffic["alpha"], service="alpha-svc", start=START, end=END,
                                            verdict="queue_backlog", result={"verdict": "queue_backlog", "path": []})
    again = diagnosis.of_stored(stored)
    assert (again.result, again.stored, again.recent) == (stored.result, stored, [stored])
    assert again.differing == [] and not again.guarded
    body = ann_client.get("/diagnosis/", {"project": "alpha", "window": stored.pk}).content.decode()
    assert 'data-verdict="queue_backlog"' in body and "Stored periodic diagnosis" in body


def test_the_diagnosis_panel_says_why_there_is_no_answer(traffic):
    found = diagnosis.build(Scope(traffic["alpha"].pk, "nope", START, END))
    assert found.result is None and "no requests of service 'nope'" in found.error and found.evidence == {}


def test_the_runs_page_lists_the_panels_runs(ann_client, traffic):
    scope = Scope(traffic["alpha"].pk, "alpha-svc", START, END)
    found = runs.build(scope)
    # the conftest traffic: totals 1225 + i ms (t_queue 10 + i), slowest first
    assert [r["total_ms"] for r in found.runs[:3]] == [1264, 1263, 1262] and len(found.runs) == 40
    rows = table(ann_client.get("/runs/", {"project": "alpha", **WINDOW}).content.decode(), "runs").rows
    assert [float(r[9][0]) for r in rows] == [r["total_ms"] for r in found.runs]
    # one run's page: its total including retries (none here)
    slowest = found.runs[0]["run_id"]
    run = runs.of(scope, slowest)
    assert run.summary["total_ms"] == 1264 and not run.truncated and runs.of(scope, "no-such-run") is None
    html = ann_client.get(f"/runs/{slowest}/", {"project": "alpha", "service": "alpha-svc", **WINDOW}).content.decode()
    assert f"<b>{fmt(1264, 'ms')}</b>" in html


def test_a_search_that_finds_nothing_offers_the_panels_wider_window(traffic):
    found = runs.build(Scope(traffic["alpha"].pk, "alpha-svc", START, END), q="0123456789abcdef")
    assert found.runs == [] and found.wider == (END - timedelta(days=7), END) and not found.wider_covered


def test_the_service_map_shows_the_panels_pairs_and_rates(members, ingest, ann_client):
    _, alpha, key = members["ann"]
    gateway, engine = [], []
    for i in range(3):
        gw, eng = request_path(f.BASE_NS + (60 + 30 * i) * 10**9)
        gateway += gw
        engine += eng
    ingest(key, f.request(*gateway, service=GATEWAY), f.request(*engine, service=ENGINE))
    materialize(alpha.pk, START - timedelta(hours=1), END + timedelta(hours=1))
    found = service_map.build(Scope(alpha.pk, GATEWAY, START, END))
    [row] = found.rows
    # 3 calls over the 65-minute window (3900 s)
    assert (row["edge"].gateway, row["edge"].engine, row["edge"].calls, row["mine"]) == (GATEWAY, ENGINE, 3, True)
    assert row["rate"] == pytest.approx(3 / 3900) and found.edges == [row["edge"]]
    html = ann_client.get("/service-map/", {"project": "alpha", "service": GATEWAY, **WINDOW}).content.decode()
    cells = html.split(f'data-gateway="{GATEWAY}" data-engine="{ENGINE}"')[1].split('<td class="num">')[1:]
    assert [c.split("</td>")[0] for c in cells[:2]] == ["3", fmt(3 / 3900)]


def test_the_slos_page_and_api_show_the_panels_numbers(ann_client, traffic):
    alpha = traffic["alpha"]
    slo = Slo.objects.create(project=alpha, service="alpha-svc", signal="ttft", threshold_ms=330, objective=0.9,
                             window_days=7)
    [row] = slos.build(Scope(alpha.pk, "", START, END), [slo]).rows
    # TTFT = t_queue + 300: 310 .. 349; under 330: the first 20 of 40 -> compliance 0.5; allowed bad 0.1 x 40 = 4,
    # 20 bad -> budget remaining 1 - 20 / 4 = -4
    assert (row.status.counts.good, row.status.counts.bad) == (20, 20)
    assert row.status.compliance == 0.5 and row.status.budget_remaining == pytest.approx(-4)
    assert row.not_measured == "" and [w for w, _, _ in row.burn] == ["5m", "30m", "1h", "6h"]
    html = ann_client.get("/slos/", {"project": "alpha", **WINDOW}).content.decode()
    assert f'class="compliance">{fmt(0.5, "nines")}<' in html and 'class="counts">20 / 20<' in html
    api = json.loads(ann_client.get("/api/v1/slos", {"project": "alpha", "end": WINDOW["end"]}).content)
    [doc] = api["slos"]
    assert (doc["compliance"], doc["budget_remaining"], doc["burn_rates"]) == (
        row.status.compliance, row.status.budget_remaining, row.status.burn.rates)
