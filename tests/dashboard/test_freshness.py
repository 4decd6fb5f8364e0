"""Answers over a window reaching the last minutes count what is stored now, not what the minute job last
materialized: no minute job runs in these tests, so every count below comes from the on-demand refresh."""
import time
from datetime import datetime, timedelta, timezone

import pytest
from django.core.cache import cache

from analysis.reads import lookups
from analysis.rollups import freshness
from analysis.scope import Scope
from store import client as store_client
from tests import factories as f

pytestmark = pytest.mark.django_db
SVC = "alpha-svc"
SECOND_NS = 1_000_000_000


def _attempts(n: int, first_ns: int) -> list:
    """n attempts one second apart from first_ns (each 1,235 ms long: all ended before now)."""
    return [f.attempt(start_ns=first_ns + i * SECOND_NS) for i in range(n)]


def _hour_of(ns: int) -> datetime:
    return datetime.fromtimestamp(ns / 1e9, timezone.utc).replace(minute=0, second=0, microsecond=0)


def _counts(client, ann_client, key, window: dict) -> tuple:
    """(the diagnosis API's requests, the Overview's attempts in window, the diagnosis page's attempts)."""
    api = client.get("/api/v1/diagnosis", {"service": SVC, **window}, HTTP_AUTHORIZATION=f"Bearer {key}").json()
    overview = ann_client.get("/", {"project": "alpha", "range": "15m"}).content.decode()
    page = ann_client.get("/diagnosis/", {"project": "alpha", "service": SVC, "range": "15m"}).content.decode()
    return api["evidence"]["requests"], _stat(overview, "attempts in window"), _stat(page, "attempts")


def _stat(body: str, label: str) -> int:
    start = body.index(f'<span class="stat">{label}<b>') + len(f'<span class="stat">{label}<b>')
    return int(body[start:body.index("</b>", start)])


def test_answers_count_spans_ingested_seconds_ago(members, ingest, clickhouse, client, ann_client):
    _, _, key = members["ann"]
    now = datetime.now(timezone.utc)
    now_ns = time.time_ns()
    window = {"start": (now - timedelta(minutes=15)).isoformat(), "end": (now + timedelta(minutes=1)).isoformat()}
    ingest(key, f.request(*_attempts(200, now_ns - 300 * SECOND_NS), service=SVC))
    assert _counts(client, ann_client, key, window) == (200, 200, 200)
    # 50 more: the next answers count them, the diagnosis page's cached result included
    ingest(key, f.request(*_attempts(50, now_ns - 90 * SECOND_NS), service=SVC))
    assert _counts(client, ann_client, key, window) == (250, 250, 250)


def test_a_window_before_the_recent_hours_costs_no_query(members, clickhouse):
    _, alpha, _ = members["ann"]
    now = datetime.now(timezone.utc)
    # nothing is read: an old window is the minute job's (queries would fail on a dropped table)
    clickhouse.command("RENAME TABLE spans TO spans_hidden")
    try:
        fresh = freshness.refresh(alpha.pk, now - timedelta(days=2), now - timedelta(days=1))
    finally:
        clickhouse.command("RENAME TABLE spans_hidden TO spans")
    assert fresh == freshness.Freshness()


def test_refresh_materializes_only_stale_hours_and_stamps_what_it_saw(members, ingest, clickhouse):
    _, alpha, key = members["ann"]
    now = datetime.now(timezone.utc)
    ingest(key, f.request(*_attempts(3, time.time_ns() - 60 * SECOND_NS), service=SVC))
    # past the overlap: spans stamped within it before a materialization count as possibly missed by it
    time.sleep(freshness.OVERLAP.total_seconds() + 0.1)
    first = freshness.refresh(alpha.pk, now - timedelta(minutes=15), now + timedelta(minutes=1))
    assert first.materialized >= 1 and first.left == 0 and first.newest_ingested_at is not None
    again = freshness.refresh(alpha.pk, now - timedelta(minutes=15), now + timedelta(minutes=1))
    assert again.materialized == 0 and again.newest_ingested_at == first.newest_ingested_at  # nothing new


# transaction: the background thread's own DB connection must see the test's rows (and not wait on its locks)
@pytest.mark.django_db(transaction=True)
def test_a_busy_hour_is_materialized_in_the_background_while_the_read_goes_on(members, ingest, clickhouse,
                                                                              monkeypatch):
    # busy from 30 s: the marks below say 60 s, and the background run of a few spans stays under it even on a
    # loaded machine (at REST_FLOOR's 1 s, a full run at load 9 made it busy and resting again)
    monkeypatch.setattr(freshness, "REST_FLOOR", timedelta(seconds=30))
    _, alpha, key = members["ann"]
    now = datetime.now(timezone.utc)
    window = (now - timedelta(minutes=15), now + timedelta(minutes=1))
    ingest(key, f.request(*_attempts(3, time.time_ns() - 60 * SECOND_NS), service=SVC))
    assert freshness.refresh(alpha.pk, *window).materialized >= 1  # the 3 attempts
    # two new attempts in one hour (a second earlier if they would straddle an hour's start): one hour left
    new_ns = time.time_ns() - 30 * SECOND_NS
    hour = _hour_of(new_ns)
    if _hour_of(new_ns + SECOND_NS) != hour:
        new_ns -= SECOND_NS
    # as if that hour's last on-demand run had taken 60 s (busy), 5 minutes ago: not resting (2 x 60 s have passed).
    # TRICKY: only that hour: a mark of 5 minutes ago on the first attempts' hour, when the hour began in the last
    # minute, made it stale too (2 left; a full run at 14:00:56)
    cache.set(freshness._mark_key(alpha.pk, hour), (now - timedelta(minutes=5), timedelta(seconds=60)))
    ingest(key, f.request(*_attempts(2, new_ns), service=SVC))
    roles, materialize = [], freshness.materialize
    monkeypatch.setattr(freshness, "materialize", lambda *a: roles.append(store_client.reader_role()) or materialize(*a))
    left = freshness.refresh(alpha.pk, *window)
    assert (left.materialized, left.left) == (0, 1)  # not waited for
    assert freshness.idle(60)  # the background run ends
    # ... on a ClickHouse client of its own: the pages' reads (this thread's) do not queue behind its statements
    assert roles == [freshness.BACKGROUND_ROLE] and store_client.reader_role() == "default"
    assert lookups.services(Scope(alpha.pk, "", *window)) == [{"service": SVC, "requests": 5}]
    again = freshness.refresh(alpha.pk, *window)
    assert again.left == 0  # current again (the run took under REST_FLOOR)


def test_an_api_answer_waits_for_a_busy_or_resting_hour(members, ingest, clickhouse, client):
    """A page goes on while a busy hour is materialized in the background; the API (a script asks once and trusts
    the number) materializes it first, resting or not: its count is what is stored now."""
    _, alpha, key = members["ann"]
    now = datetime.now(timezone.utc)
    window = (now - timedelta(minutes=15), now + timedelta(minutes=1))
    ingest(key, f.request(*_attempts(3, time.time_ns() - 60 * SECOND_NS), service=SVC))
    assert freshness.refresh(alpha.pk, *window).materialized >= 1
    # busy (10 s a run), and resting: its last run "ended" just now
    for ago in (61, 25):
        hour = (now - timedelta(seconds=ago)).replace(minute=0, second=0, microsecond=0)
        cache.set(freshness._mark_key(alpha.pk, hour), (datetime.now(timezone.utc), timedelta(seconds=10)))
    ingest(key, f.request(*_attempts(2, time.time_ns() - 30 * SECOND_NS), service=SVC))
    assert freshness.refresh(alpha.pk, *window).materialized == 0  # a page's read: not waited for
    assert freshness.idle(60)
    ingest(key, f.request(*_attempts(4, time.time_ns() - 20 * SECOND_NS), service=SVC))
    for ago in (61, 25):  # busy and resting again, as the background run left it
        hour = (now - timedelta(seconds=ago)).replace(minute=0, second=0, microsecond=0)
        cache.set(freshness._mark_key(alpha.pk, hour), (datetime.now(timezone.utc), timedelta(seconds=10)))
    api = client.get("/api/v1/diagnosis", {"service": SVC, "start": window[0].isoformat(),
                                           "end": window[1].isoformat()}, HTTP_AUTHORIZATION=f"Bearer {key}")
    assert api.status_code == 200 and api.json()["evidence"]["requests"] == 9, api.content[:300]


def test_the_check_reads_the_hours_each_insert_marks(members, ingest, clickhouse):
    """ingested_hours, filled on every INSERT: an attempt marks its hour; a stage span in an hour's first 10 minutes
    also marks the hour before (where its parent may sit), as the minute job's dirty_hours does."""
    _, alpha, key = members["ann"]
    ingest(key, f.request(f.attempt(start_ns=f.BASE_NS + 1800 * SECOND_NS), service=SVC))  # 10:30
    late = f.attempt(start_ns=f.BASE_NS + 3780 * SECOND_NS)  # 11:03
    ingest(key, f.request(late, f.stage(late, "tokenize", 1.0, 2.0), service=SVC))
    [(first, second)] = clickhouse.query_rows("SELECT min(ingested_at), max(ingested_at) FROM spans")
    assert first < second  # two INSERTs
    rows, _, _ = freshness._check(alpha.pk, f.BASE, f.BASE + timedelta(hours=3))
    # 10:00 is marked again by the second INSERT's stage span, 11:03 being in 11:00's first 10 minutes
    assert [(row["hour"], row["ingested_at"]) for row in rows] == [
        (f.BASE + timedelta(hours=1), second.replace(tzinfo=timezone.utc)),
        (f.BASE, second.replace(tzinfo=timezone.utc))]


def test_the_minute_job_marks_how_long_an_hour_took_so_reads_know_a_busy_hour(members, ingest, clickhouse):
    from analysis.work import jobs

    _, alpha, key = members["ann"]
    now = datetime.now(timezone.utc)
    ingest(key, f.request(*_attempts(3, time.time_ns() - 60 * SECOND_NS), service=SVC))
    hour = (now - timedelta(seconds=60)).replace(minute=0, second=0, microsecond=0)
    cache.delete(freshness._mark_key(alpha.pk, hour))
    # TRICKY: spans ingested within OVERLAP before a run still count as newer than it (freshness.py); a run that soon
    # after them took over REST_FLOOR under a loaded suite (4 workers), so the read found the hour resting, not current
    time.sleep(freshness.OVERLAP.total_seconds() + 0.1)
    assert jobs.materialize_since_watermark(now)["hours"] >= 1
    checked_at, took = cache.get(freshness._mark_key(alpha.pk, hour))
    assert checked_at is None and took > timedelta(0)  # its run is dated by materialized_hours, its duration kept
    window = (now - timedelta(minutes=15), now + timedelta(minutes=1))
    found = freshness.refresh(alpha.pk, *window)
    assert (found.materialized, found.left) == (0, 0)  # and the read finds the hour current: nothing to redo


def test_a_busy_hour_rests_at_least_a_minute_job_period_and_a_quiet_one_never():
    """Resting: stale, but its last run took REST_FLOOR or more and began less than twice that, or BUSY_REST, ago
    (the background refresh must not redo the current hour of a busy service back to back)."""
    now = datetime.now(timezone.utc)
    row = {"computed_at": None, "ingested_at": now, "checked_at": now}  # spans newer than any run: stale or resting

    def state(began_s_ago: float, took_s: float) -> str:
        return freshness._state(row, (now - timedelta(seconds=began_s_ago), timedelta(seconds=took_s)))

    assert freshness.BUSY_REST == timedelta(seconds=60)
    assert state(30, 10) == "resting"  # twice its 10 s has passed, a minute job's period has not
    assert state(61, 10) == "stale"
    assert state(100, 60) == "resting" and state(121, 60) == "stale"  # a long run rests twice its own time
    assert state(5, 0.5) == "stale"  # a quiet hour (under REST_FLOOR) is redone at every read


def test_a_page_viewed_again_asks_the_store_only_whether_the_window_changed(members, ingest, clickhouse, ann_client,
                                                                            monkeypatch):
    """The pickers, the coverage strip and the page's numbers are kept while the window's data is unchanged
    (analysis/reads/versions.py): the same view again reads two small statements, the freshness check and the
    window's version; newer spans are materialized by the next view's check and its numbers read again."""
    _, _, key = members["ann"]
    ingest(key, f.request(*_attempts(3, time.time_ns() - 60 * SECOND_NS), service=SVC))
    time.sleep(freshness.OVERLAP.total_seconds() + 0.1)  # else the first view's materialization is redone (OVERLAP)
    statements, call = [], store_client._call
    monkeypatch.setattr(store_client, "_call", lambda *a, **k: statements.append(a[1]) or call(*a, **k))
    checks = ("Per hour of one project", "The newest materialization (materialized_hours) and the newest aggregation")
    query = {"project": "alpha", "service": SVC, "range": "15m"}
    for path in ("/", "/diagnosis/", "/capacity/", "/scheduler/", "/tenants/", "/prompts/", "/connections/"):
        # the 15-minute window moves with the clock's minute: the two views of a page within one minute (under make
        # test's load a page took seconds, and /capacity/'s two views once straddled a minute: its window changed)
        left = 60 - time.time() % 60
        if left < 15:
            time.sleep(left + 0.5)
        first = ann_client.get(path, query).content.decode()
        statements.clear()
        assert ann_client.get(path, query).content.decode().count("<td") == first.count("<td")
        assert len(statements) == 2 and all(any(c in s for s in statements) for c in checks), (path, statements)
    ingest(key, f.request(*_attempts(2, time.time_ns() - 30 * SECOND_NS), service=SVC))
    statements.clear()
    page = ann_client.get("/diagnosis/", query).content.decode()
    assert len(statements) > 2 and _stat(page, "attempts") == 5
