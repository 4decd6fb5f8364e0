"""Query helpers for assertions, and a fake clock."""
from datetime import timedelta, timezone

from tests.factories import BASE


def attempts(project_id, start=BASE - timedelta(days=1), end=BASE + timedelta(days=1), where="1", order="start_at"):
    """Rows of the attempts view for a project and window."""
    from store import client

    return client.query(
        f"SELECT * FROM attempts(project_id={{p:UInt32}}, start={{s:DateTime64(9, 'UTC')}}, end={{e:DateTime64(9, 'UTC')}}) "
        f"WHERE {where} ORDER BY {order}",
        parameters={"p": project_id, "s": start.astimezone(timezone.utc).replace(tzinfo=None), "e": end.astimezone(timezone.utc).replace(tzinfo=None)},
    )


def spans(project_id, columns="*", where="1", order="start_at"):
    """Logical rows of the spans table (FINAL: re-sent copies count once) for a project."""
    from store import client

    return client.query(
        f"SELECT {columns} FROM spans FINAL WHERE project_id = {{p:UInt32}} AND {where} ORDER BY {order}",
        parameters={"p": project_id},
    )


class Ticks:
    """A monotonic clock for analysis.fairness.Deadline that moves one second each time it is read."""

    def __init__(self):
        self.now = -1.0

    def __call__(self) -> float:
        self.now += 1
        return self.now


_versions = [BASE.replace(tzinfo=None)]


def publish_buckets(project_id):
    """For tests that write request_buckets rows themselves: rewrite the project's rows as one new version of each
    hour and record it, as materialize() leaves them (reads keep each hour's latest version: analysis/sql/_current.sql;
    FINAL keeps one row per attempt, the latest copy, as a materialization would)."""
    from datetime import datetime

    from store import client

    # a version newer than every earlier one, even within one millisecond
    _versions.append(max(datetime.now(timezone.utc).replace(tzinfo=None), _versions[-1] + timedelta(milliseconds=1)))
    params = {"p": project_id, "v": _versions[-1]}
    client.command("INSERT INTO request_buckets SELECT * REPLACE ({v:DateTime64(3, 'UTC')} AS computed_at) "
                   "FROM request_buckets FINAL WHERE project_id = {p:UInt32}", parameters=params)
    client.command("INSERT INTO materialized_hours SELECT DISTINCT project_id, toStartOfHour(queued_at), "
                   "{v:DateTime64(3, 'UTC')} FROM request_buckets WHERE project_id = {p:UInt32}", parameters=params)
