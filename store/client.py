"""The only module that imports clickhouse_connect: one client per process, errors translated.

Embedded mode opens chDB (`chdb:///path`) inside this process. chDB allows one process per data
directory, so a second process gets EmbeddedStoreBusy naming the process that holds it.
"""
import fcntl
import logging
import os
import re
import threading
from pathlib import Path
from urllib.parse import urlparse

import clickhouse_connect
from clickhouse_connect.driver.exceptions import ClickHouseError as DriverError
from django.conf import settings

from store import memory, priority
from store.errors import TIMEOUT_EXCEEDED, ClickHouseError  # noqa: F401 (re-exported: the client's errors)
from store.reasons import Reason

log = logging.getLogger(__name__)
_clients: dict[str, object] = {}
_lock = threading.Lock()
_local = threading.local()  # .role: the client this thread reads with (store/concurrent.py binds its threads')
HOLDER_FILE = "holder.pid"
# "Code: 252. DB::Exception: ..." is how both the HTTP interface and chDB report a server-side error.
_CODE = re.compile(r"Code: (\d+)\b")


def error_code(exc: Exception) -> int | None:
    """ClickHouse's numeric error code of a driver exception, None when the error did not come from ClickHouse."""
    code = getattr(exc, "code", None)
    if isinstance(code, int):
        return code
    match = _CODE.search(str(exc))
    return int(match[1]) if match else None


class EmbeddedStoreBusy(ClickHouseError):
    def __init__(self, path: str):
        holder = _read_holder(path)
        who = f"process {holder}" if holder else "another process"
        served = _served_url()
        ask = (f"ask the running product instead: {served}api/v1/diagnosis?service=...&start=...&end=... (or "
               f"{served}api/v1/incidents), with a read key" if served else "talk to it over its HTTP API while it runs")
        super().__init__(
            Reason.STORE_BUSY,
            f"The embedded ClickHouse store at {path} is held by {who} (chDB allows one process per "
            f"data directory). Stop it first, or {ask}.",
        )


def _served_url() -> str:
    """The address `up` wrote when it started on this data dir ("" when none)."""
    try:
        return Path(settings.UP_URL_FILE).read_text().strip()
    except (OSError, AttributeError):
        return ""


def is_embedded() -> bool:
    return settings.CLICKHOUSE_URL.startswith("chdb://")


def embedded_path() -> str:
    return urlparse(settings.CLICKHOUSE_URL).path


def _read_holder(path: str) -> str:
    try:
        return Path(path, HOLDER_FILE).read_text().strip()
    except OSError:
        return ""


def get_client(role: str = "default"):
    """The process's client for `role`, created on first use (thread-safe).

    The spool writer has a client of its own: a client serialises its calls, and an INSERT of a
    large batch takes seconds, which reads (dashboards, status) should not wait behind.
    """
    client = _clients.get(role)
    if client is None:
        with _lock:
            client = _clients.get(role)
            if client is None:
                client = _clients[role] = _connect()
    return client


def _connect():
    url = settings.CLICKHOUSE_URL
    if not is_embedded():
        try:
            return clickhouse_connect.get_client(dsn=url, compress=False, autogenerate_session_id=False)
        except DriverError as exc:
            raise ClickHouseError(Reason.UNAVAILABLE, f"cannot reach ClickHouse at {urlparse(url).hostname}: {exc}") from exc
    path = embedded_path()
    if not settings.INGEST_WRITER:
        # TRICKY: chDB allows one process per data dir: a receiver that opened it would lock out the writer process
        raise ClickHouseError(Reason.STORE_BUSY, f"This process runs with INGEST_WRITER=off (a receiver): the embedded "
                              f"store at {path} is the writer process's (`manage.py serve_writer`); read it through "
                              f"a process that holds it, or use a ClickHouse server (CLICKHOUSE_URL=http://...)")
    Path(path).mkdir(parents=True, exist_ok=True)
    # TRICKY: once this process has the engine open, its own lock on `status` would look foreign.
    if not _clients and _held_elsewhere(path):
        raise EmbeddedStoreBusy(path)
    memory.configure_allocator()  # before chDB's library loads (the first client loads it)
    try:
        client = clickhouse_connect.get_client(dsn=url)
    except DriverError as exc:
        raise ClickHouseError(Reason.UNAVAILABLE, f"cannot open embedded ClickHouse at {path}: {exc}") from exc
    Path(path, HOLDER_FILE).write_text(f"{os.getpid()} ({' '.join(_cmdline())})")
    return client


def _held_elsewhere(path: str) -> bool:
    """True when another process has the chDB engine open (it holds an flock on `status`)."""
    try:
        fd = os.open(Path(path, "status"), os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing also drops our probe lock
    return False


def _cmdline() -> list[str]:
    try:
        return Path("/proc/self/cmdline").read_bytes().decode(errors="replace").split("\0")[:4]
    except OSError:
        return []


def bind_reader(role: str) -> None:
    """This thread's reads (query, query_rows) go through the client of `role` from now on."""
    _local.role = role


def reader_role() -> str:
    return getattr(_local, "role", "default")


def _call(fn, *args, settings: dict | None = None, **kwargs):
    nice = priority.statement_nice()
    if nice is not None and not is_embedded():  # a server's threads are not this process's to lower
        nice = None
    if nice is not None:  # a background thread's statement: ClickHouse's threads of it at that thread's priority
        settings = {**(settings or {}), "os_threads_nice_value_query": nice}
    try:
        return fn(*args, settings=settings, **kwargs)
    except DriverError as exc:
        raise ClickHouseError(Reason.QUERY_FAILED, str(exc), error_code(exc)) from exc
    finally:
        if nice is not None:
            priority.after_statement()


def query(sql: str, parameters: dict | None = None, settings: dict | None = None) -> list[dict]:
    """Rows as dicts (column name -> value). A read: stopped after CLICKHOUSE_QUERY_TIMEOUT_SECONDS (see query_rows)."""
    result = _read(sql, parameters, settings)
    names = result.column_names
    return [dict(zip(names, row)) for row in result.result_rows]


def query_rows(sql: str, parameters: dict | None = None, settings: dict | None = None) -> list[tuple]:
    """Rows as tuples. A read past CLICKHOUSE_QUERY_TIMEOUT_SECONDS raises ClickHouseError(code=TIMEOUT_EXCEEDED),
    so one heavy page cannot hold the store for every other reader; `settings` may set max_execution_time itself."""
    return _read(sql, parameters, settings).result_rows


def query_columns(sql: str, parameters: dict | None = None, settings: dict | None = None) -> dict[str, list]:
    """The result by column (name -> values, in row order), for callers that turn many rows into their own shape:
    no dict per row. A read, as query_rows. No rows: {}, from every backend (chDB then sends no column names)."""
    result = _read(sql, parameters, settings)
    if not result.row_count:
        return {}
    return dict(zip(result.column_names, map(list, result.result_columns)))


def _read(sql: str, parameters: dict | None, settings: dict | None):
    """The driver's result of a read through this thread's client, with the read timeout."""
    return _call(get_client(reader_role()).query, sql, parameters=parameters, settings=_read_settings(settings))


def _read_settings(extra: dict | None) -> dict:
    # only reads get the timeout: command() (the writer's INSERTs, migrations, materializing) runs to the end
    return {"max_execution_time": settings.CLICKHOUSE_QUERY_TIMEOUT_SECONDS, **(extra or {})}


def command(sql: str, parameters: dict | None = None, settings: dict | None = None, data: bytes | None = None,
            role: str | None = None):
    """A statement through the client of `role` (default: this thread's, as reads: store/concurrent.py's threads
    each have their own, so statements run by gather() do not queue behind one client)."""
    return _call(get_client(role or reader_role()).command, sql, parameters=parameters, settings=settings, data=data)


def close() -> None:
    """Release this process's clients (embedded: frees the data directory)."""
    with _lock:
        for client in _clients.values():
            client.close()
        _clients.clear()
