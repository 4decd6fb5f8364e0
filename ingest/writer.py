"""Moves spooled segments into ClickHouse in large inserts, and keeps them through outages.

Closed segments go to ClickHouse in batches of up to INGEST_BATCH_BYTES, one INSERT per batch
(ingest.inserts). A batch is named by a manifest written
before its INSERT and used as the deduplication token, so a batch replayed after a crash stores
nothing twice (see spool.Batch). A failed insert leaves the batch in the spool and the writer
retries with back-off (a transient error: no error code, or one of TRANSIENT_CODES); a batch ClickHouse
refuses for its data is bisected, its good spans stored and the spans at fault moved to quarantine/
with their reason, instead of blocking every later batch.
"""
import logging
import os
import threading
import time
from pathlib import Path

from django.conf import settings

from ingest import inserts, quarantine, records
from ingest.inserts import BAD_DATA_CODES, LOGS, METRICS, TRACES, Kind, insert_batch, is_transient, whole_records
from ingest.spool import Batch, Spool
from store import client, priority
from store.sql import SqlFiles

__all__ = ["LOGS", "METRICS", "TRACES", "Bisection", "Kind", "ProcessWriter", "Writer", "insert_batch", "quarantine_whole"]

log = logging.getLogger(__name__)
_sql = SqlFiles(Path(__file__).parent / "sql").text
MAX_BACKOFF_S = 5.0  # retrying costs one failed INSERT; a long wait only delays the drain after an outage
IDLE_S = 0.5  # writer threads past the first wait until nothing was appended for this long
PURGE_AFTER_BYTES = 8 * 1024 * 1024  # smaller batches leave too little to be worth a purge (~30 ms)


class Bisection:
    """Finds the spans of a refused batch that ClickHouse will not take; stores every other span.

    The batch's records are cut in halves, then a lone record into halves of its spans, each part
    inserted under the batch's token plus its path (deterministic: a replay after a crash cuts the same
    parts, and ClickHouse drops the parts that had landed). It stops at a transient error (the batch
    stays in the spool) and after `budget_s`, when what is still refused goes to quarantine whole.
    """

    def __init__(self, batch: Batch, budget_s: float, role: str = "writer"):
        self.batch, self.deadline, self.role = batch, time.monotonic() + budget_s, role
        self.stored_spans, self.inserts = 0, 0
        self.refused: list[tuple[str, list[records.Unit], client.ClickHouseError]] = []

    def run(self, error: client.ClickHouseError) -> None:
        data = b"".join(os.pread(s.fd, whole_records(s), 0) for s in self.batch.segments)
        self._settle(records.units(data), "b", error)
        for path, part, exc in self.refused:
            # Without a code of bad data, a lone refused part is at fault only if other parts got in.
            if exc.code not in BAD_DATA_CODES and not self.stored_spans:
                raise exc
        for path, part, exc in self.refused:
            self._quarantine(path, part, exc)

    def _settle(self, part: list, path: str, error: client.ClickHouseError) -> None:
        if len(part) == 1:
            halves = part[0].halves()
            if halves is None or time.monotonic() > self.deadline:
                self.refused.append((path, part, error))
                return
            part = list(halves)
        if time.monotonic() > self.deadline:
            self.refused.append((path, part, error))
            return
        mid = len(part) // 2
        for i, piece in enumerate((part[:mid], part[mid:])):
            try:
                self.inserts += 1
                inserts.insert_records(f"{self.batch.token}-{path}{i}", data=b"".join(u.framed() for u in piece),
                        scratch=self.batch.manifest.parent / "bisect", role=self.role)
            except client.ClickHouseError as exc:
                if is_transient(exc):
                    raise
                self._settle(piece, f"{path}{i}", exc)
            else:
                self.stored_spans += sum(max(u.spans, 0) for u in piece)

    def _quarantine(self, path: str, part: list, exc: client.ClickHouseError) -> None:
        spans: dict = {}
        for unit in part:
            spans[unit.project_id] = spans.get(unit.project_id, 0) + max(unit.spans, 0)
        name = f"{self.batch.token}-{path}"
        where = quarantine.put(self.batch.manifest.parent, name, b"".join(u.framed() for u in part),
                               reason=f"clickhouse_{exc.code}", code=exc.code, message=str(exc), spans=spans,
                               count=len(part))
        log.error("spool: %d span(s) refused by ClickHouse (code %s) quarantined in %s: %s",
                  sum(spans.values()), exc.code, where, str(exc)[:300])


def quarantine_whole(batch: Batch, exc: client.ClickHouseError, kind: Kind = METRICS) -> int:
    """A refused metrics or logs batch goes to quarantine whole: their records are not bisected (points or log
    records that passed decode's checks and are still refused mean a schema fault, which an operator fixes before
    replaying). Returns the segments quarantined."""
    data = b"".join(os.pread(s.fd, whole_records(s), 0) for s in batch.segments)
    points: dict = {}
    for unit in records.units(data, count=False):
        points[unit.project_id] = points.get(unit.project_id, 0) + 1
    where = quarantine.put(batch.manifest.parent, batch.token, data, reason=f"clickhouse_{exc.code}", code=exc.code,
                           message=str(exc), spans=points, count=len(batch.segments))
    log.error("%s spool: batch %s refused by ClickHouse (code %s), quarantined in %s: %s", kind.name, batch.token,
              exc.code, where, str(exc)[:300])
    return len(batch.segments)


def _release_memory(role: str) -> None:
    """Embedded mode: give the memory the last INSERT freed back to the OS (a failure only costs RSS)."""
    if client.is_embedded():
        try:
            client.command(_sql("jemalloc_purge"), role=role)
        except client.ClickHouseError as exc:
            log.warning("spool writer: could not release memory: %s", exc)


class Writer:
    """The background threads of one process; `flush()` drains the spool synchronously.

    With threads > 1, that many batches are inserted at once, each by its own thread on its own ClickHouse
    client: an INSERT runs on one core (see _insert_settings), and the claiming that lets several processes
    share a spool (flocks, manifests) keeps two threads off the same segments just as well. The threads
    past the first drain only while this process receives nothing (IDLE_S): they take the cores receiving
    leaves idle, not CPU from requests waiting for their 200 (with them busy during a burst, accepted
    spans/s fell by a quarter).

    With inserts=False (INGEST_WRITER=off: a receiver) it never opens ClickHouse: one thread closes this process's
    old segments and re-reads the backlog (the spool's limits see what other processes' writers removed), and
    stop() leaves the segments to the writer process sharing the spool (`manage.py serve_writer`).
    """

    def __init__(self, spool: Spool, interval_s: float, kind: Kind = TRACES, threads: int = 1, inserts: bool = True):
        self.spool, self.interval_s, self.kind, self.inserts = spool, interval_s, kind, inserts
        self.threads = threads if inserts else 1
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._flush_lock = threading.Lock()
        self._busy = [threading.Lock() for _ in range(threads)]  # held by background thread n while it drains
        self.last_error: str = ""

    def start(self) -> None:
        if not self._threads:
            run = self._run if self.inserts else self._close_segments
            self._threads = [threading.Thread(target=run, args=(n,), daemon=True,
                                              name=f"spool-writer-{self.kind.name}-{n}") for n in range(self.threads)]
            for thread in self._threads:
                thread.start()

    def stop(self, drain: bool = True) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()
        self._threads = []
        if drain and self.inserts:
            try:
                self.flush(force=True)
            except client.ClickHouseError as exc:
                log.warning("spool not drained at stop (kept on disk, sent at next start): %s", exc)
        self.spool.close()

    def flush(self, force: bool = False) -> int:
        """Insert every claimable segment now, and wait for the batches background threads hold; returns how many
        segments this call inserted. Raises ClickHouseError on failure. A receiver only closes its segments: 0."""
        if not self.inserts:
            self.spool.rotate(force=force)
            self.spool.refresh_backlog()
            return 0
        with self._flush_lock:
            done = self._drain(_role(0), force)
            for busy in self._busy:  # TRICKY: a batch a background thread holds was not claimable above
                with busy:
                    pass
            return done + self._drain(_role(0))

    def _drain(self, role: str, force: bool = False) -> int:
        self.spool.refresh_backlog()  # other processes append to the same spool
        self.spool.rotate(force=force)
        done = 0
        while (batch := self.spool.claim_batch(settings.INGEST_BATCH_BYTES)) is not None:
            size = sum(s.size() for s in batch.segments)
            try:
                done += self._insert_or_bisect(batch, role)
            except BaseException:
                batch.release()
                raise
            batch.remove()
            self.last_error = ""  # ClickHouse takes inserts again: /healthz is well while the rest drains
            if size >= PURGE_AFTER_BYTES:
                _release_memory(role)
        self.spool.refresh_backlog()
        return done

    def _insert_or_bisect(self, batch: Batch, role: str) -> int:
        """Insert the batch; refused for its data, store all but the spans at fault (quarantined)."""
        try:
            return insert_batch(batch, self.kind, role)
        except client.ClickHouseError as exc:
            if is_transient(exc):
                raise
            if not self.kind.bisect:
                return quarantine_whole(batch, exc, self.kind)
            log.warning("spool batch %s refused (code %s); bisecting to isolate the spans at fault", batch.token,
                        exc.code)
            Bisection(batch, settings.INGEST_BISECT_BUDGET_SECONDS, role).run(exc)
            return len(batch.segments)

    def _run(self, n: int) -> None:
        priority.background()
        backoff = self.interval_s
        while not self._stop.wait(backoff):
            if n and time.monotonic() - self.spool.last_append_at < IDLE_S:
                continue
            try:
                with self._busy[n]:
                    self._drain(_role(n))
                backoff, self.last_error = self.interval_s, ""
            except client.ClickHouseError as exc:
                self.last_error = str(exc)
                backoff = min(MAX_BACKOFF_S, max(backoff * 2, 1.0))
                log.error("spool writer: insert failed, retrying in %.0fs (segments kept): %s", backoff, exc)
            except Exception:  # keep the thread alive: losing it would silently stop ingest
                log.exception("spool writer: unexpected error; retrying")
                backoff = min(MAX_BACKOFF_S, max(backoff * 2, 1.0))


    def _close_segments(self, n: int) -> None:
        """A receiver's thread: its segments become claimable by age as the writer's would close them."""
        while not self._stop.wait(self.interval_s):
            try:
                self.spool.rotate()
                self.spool.refresh_backlog()
            except OSError:  # keep the thread alive: the next append reports a failing disk to its client
                log.exception("spool: could not close segments; retrying")


def _role(n: int) -> str:
    """The ClickHouse client of writer thread n: a client runs one call at a time."""
    return "writer" if n == 0 else f"writer-{n}"


class ProcessWriter:
    """The process's writer of one kind over its spool directory, its thread started on first use (thread-safe)."""

    def __init__(self, kind: Kind, subdirectory: str = ""):
        self.kind, self.subdirectory = kind, subdirectory
        self._lock = threading.Lock()
        self._writer: Writer | None = None

    def get(self) -> Writer:
        if self._writer is None:
            with self._lock:
                if self._writer is None:
                    spool = Spool(settings.INGEST_SPOOL_DIR / self.subdirectory,
                                  segment_spans=settings.INGEST_SEGMENT_SPANS, max_bytes=settings.INGEST_SPOOL_MAX_BYTES,
                                  fsync=settings.INGEST_SPOOL_FSYNC, max_age_s=settings.INGEST_FLUSH_INTERVAL_MS / 1000)
                    threads = settings.INGEST_WRITER_THREADS if self.kind is TRACES else 1
                    self._writer = Writer(spool, interval_s=settings.INGEST_FLUSH_INTERVAL_MS / 4000, kind=self.kind,
                                          threads=threads, inserts=settings.INGEST_WRITER)
                    self._writer.start()
        return self._writer

    def flush_if_started(self) -> None:
        """Store what the spool holds now, when the writer runs (tests empty the store between them: a batch of an
        earlier test must not land in the next one's tables)."""
        if self._writer is not None:
            self._writer.flush(force=True)

    def stop(self, drain: bool = True) -> None:
        with self._lock:
            if self._writer is not None:
                self._writer.stop(drain=drain)
                self._writer = None
