"""analysis.reads.versions: the pickers' and the coverage strip's answers are kept while the window's hours keep their
versions, and read anew as soon as one of those hours is materialized or aggregated again."""
from datetime import timedelta

from analysis.reads import coverage, lookups
from analysis.rollups.aggregates import refresh
from analysis.scope import Scope
from tests import factories as f
from tests.analysis.test_queries import DAY, SVC, buckets, send  # noqa: F401 (fixtures)

WINDOW = (f.BASE - DAY, f.BASE + DAY)
HOUR = f.BASE.replace(minute=0, second=0, microsecond=0)  # the attempts' hour


def test_an_answer_is_kept_until_an_hour_of_the_window_is_materialized_again(send, clickhouse):
    pid = send(f.request(f.attempt(), f.attempt()))
    assert lookups.services(Scope(pid, "", *WINDOW)) == [{"service": SVC, "requests": 2}]
    assert coverage.coverage(Scope(pid, SVC, *WINDOW))["attempts"] == 2
    # the rows go behind the store's back while their hour keeps its version: the kept answers stand
    clickhouse.command("TRUNCATE TABLE request_buckets")
    assert lookups.services(Scope(pid, "", *WINDOW)) == [{"service": SVC, "requests": 2}]
    assert coverage.coverage(Scope(pid, SVC, *WINDOW))["attempts"] == 2
    send(f.request(f.attempt()))  # a third attempt: the hour materialized again from its 3 spans, read at once
    assert lookups.services(Scope(pid, "", *WINDOW)) == [{"service": SVC, "requests": 3}]
    assert coverage.coverage(Scope(pid, SVC, *WINDOW))["attempts"] == 3


def test_an_aggregation_is_a_new_version_too(send, clickhouse):
    pid = send(f.request(f.attempt(), f.attempt()))
    refresh(pid, HOUR, HOUR + timedelta(hours=1))  # the hour aggregated: the window's core, read from request_hours
    assert lookups.services(Scope(pid, "", *WINDOW)) == [{"service": SVC, "requests": 2}]
    clickhouse.command("TRUNCATE TABLE request_buckets")
    # aggregated again, from no rows now: the hour's new version has no attempts, and the picker reads it
    refresh(pid, HOUR, HOUR + timedelta(hours=1))
    assert lookups.services(Scope(pid, "", *WINDOW)) == []
