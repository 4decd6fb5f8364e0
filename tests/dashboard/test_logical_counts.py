"""Every count shown or returned is logical: one per span id, however many copies re-sends and re-materializations
left unmerged (both tables are ReplacingMergeTree), and the Overview's numbers say which window they cover."""
import pytest

from analysis.reads import lookups
from analysis.rollups.materialize import materialize
from analysis.scope import Scope
from analysis.work import jobs
from reports.build import service_review
from tests import factories as f
from tests.dashboard.conftest import END, START, WINDOW

pytestmark = pytest.mark.django_db
SVC = "alpha-svc"
ATTEMPTS = 20


@pytest.fixture
def sent_twice(members, ingest, clickhouse):
    """alpha's 20 attempts (half on /a, each with a connect stage span) sent twice and materialized twice, with
    merges stopped so that every copy stays on disk: 80 spans and 40 bucket rows stored, 20 attempts logically."""
    _, alpha, key = members["ann"]
    attempts = [f.attempt(route="/a" if i % 2 else "/b") for i in range(ATTEMPTS)]
    request = f.request(*attempts, *[f.stage(a, "connect", 1, 5) for a in attempts], service=SVC)
    for table in ("spans", "request_buckets"):
        clickhouse.command(f"SYSTEM STOP MERGES {table}")
    try:
        for _ in range(2):  # the exporter retried, and the minute job ran again over the same hour
            ingest(key, request)
            materialize(alpha.pk, START, END)
        copies = clickhouse.query_rows("SELECT (SELECT count() FROM spans), (SELECT count() FROM request_buckets)")
        assert copies == [(4 * ATTEMPTS, 2 * ATTEMPTS)]  # the duplicates the counts below must not see
        yield alpha, key
    finally:
        for table in ("spans", "request_buckets"):
            clickhouse.command(f"SYSTEM START MERGES {table}")


def test_the_pickers_count_each_attempt_once(sent_twice):
    alpha, _ = sent_twice
    assert lookups.service_choices(Scope(alpha.pk, "", START, END)).values == [{"value": SVC, "requests": ATTEMPTS}]
    routes = lookups.route_choices(Scope(alpha.pk, SVC, START, END)).values
    assert routes == [{"value": "/a", "requests": ATTEMPTS // 2}, {"value": "/b", "requests": ATTEMPTS // 2}]


def test_the_overview_counts_each_attempt_once_and_labels_its_windows(sent_twice, ann_client):
    alpha, _ = sent_twice
    stored = jobs.diagnose_window(alpha.pk, SVC, START, END)
    body = ann_client.get("/", {"project": "alpha", **WINDOW}).content.decode()
    assert f"attempts in window<b>{ATTEMPTS}</b>" in body
    assert "Window 2026-01-05 09:55 – 2026-01-05 11:00 UTC" in body  # the card says which window it counts
    # the verdict's row counts its own diagnosed window, not the page's
    assert f"window={stored.pk}" in body
    runs = stored.result["evidence"]["retries"]["runs"]  # the diagnosed window's runs, named as runs
    assert f'<td class="num">{runs}</td>' in body and ">runs diagnosed<" in body
    assert f'"requests": {ATTEMPTS}' in ann_client.get("/api/v1/diagnosis", {
        "project": "alpha", "service": SVC, **WINDOW}).content.decode()


def test_ingest_status_counts_each_span_once(sent_twice, client):
    _, key = sent_twice
    status = client.get("/api/v1/ingest/status", HTTP_AUTHORIZATION=f"Bearer {key}").json()
    assert (status["spans_stored"], status["attempts_stored"]) == (2 * ATTEMPTS, ATTEMPTS)  # attempts + stages


def test_the_diagnosis_and_the_weekly_review_count_each_attempt_once(sent_twice, client):
    alpha, key = sent_twice
    answer = client.get("/api/v1/diagnosis", {"service": SVC, **WINDOW}, HTTP_AUTHORIZATION=f"Bearer {key}").json()
    assert answer["evidence"]["requests"] == ATTEMPTS
    review = service_review(alpha, SVC, START, END)
    assert review["requests"]["this"] == ATTEMPTS
