"""The weekly review's incidents: count, total minutes, by verdict, the longest with its link; the week's only."""
from datetime import datetime, timedelta, timezone

from django.test import override_settings

from reports import build, weeks as weeks_
from reports.sending import send
from tests import factories as f
from tests.reports.conftest import WEEK2

MONDAY = datetime(2026, 1, 12, 10, tzinfo=timezone.utc)  # in WEEK2


@override_settings(PUBLIC_BASE_URL="https://lo.example.com")
def test_the_weeks_incidents_are_counted_and_the_longest_linked(weeks, beta):
    f.incident(weeks, "alpha-svc", start=MONDAY, minutes=20)
    longest = f.incident(weeks, "retry-svc", start=MONDAY + timedelta(days=1), minutes=45, verdict="network_overhead")
    f.incident(weeks, "alpha-svc", start=MONDAY + timedelta(days=2), minutes=5)
    f.incident(weeks, "alpha-svc", start=MONDAY - timedelta(days=7), minutes=300)  # the week before
    f.incident(beta[0], "alpha-svc", start=MONDAY, minutes=500)  # another project
    data = build.build(weeks, WEEK2)["incidents"]
    # 20 + 45 + 5 minutes; two queue_backlog, one network_overhead
    assert (data["count"], data["open"], data["minutes"]) == (3, 0, 70.0)
    assert data["by_verdict"] == {"queue_backlog": 2, "network_overhead": 1}
    assert data["longest"] == {"id": longest.pk, "service": "retry-svc", "route": "", "verdict": "network_overhead",
                               "start": "2026-01-13T10:00:00+00:00", "end": "2026-01-13T10:45:00+00:00",
                               "minutes": 45.0, "url": f"https://lo.example.com/incidents/{longest.pk}/?project=alpha"}


def test_an_open_incident_counts_up_to_the_review_time(weeks):
    start, end = weeks_.bounds(WEEK2)
    f.incident(weeks, "alpha-svc", start=MONDAY, minutes=30)
    ongoing = f.incident(weeks, "alpha-svc", start=MONDAY + timedelta(hours=1), open_=True)
    data = build.incidents(weeks, start, end, now=MONDAY + timedelta(hours=2))
    # 30 minutes closed + 60 so far
    assert (data["count"], data["open"], data["minutes"]) == (2, 1, 90.0)
    assert data["longest"]["id"] == ongoing.pk and data["longest"]["end"] is None


def test_review_page_shows_the_incidents(weeks, ann_client):
    longest = f.incident(weeks, "alpha-svc", start=MONDAY, minutes=25, verdict="admission_gap")
    send(weeks, WEEK2)
    body = ann_client.get(f"/reviews/{WEEK2}/", {"project": "alpha"}).content.decode()
    assert 'id="incident-count">1<' in body and 'id="incident-minutes">25 min<' in body
    assert "admission_gap × 1" in body and f"/incidents/{longest.pk}/?project=alpha" in body
    empty = send(weeks, "2026-W10")
    assert empty.data["incidents"] == {"count": 0, "open": 0, "minutes": 0, "by_verdict": {}, "longest": None}
