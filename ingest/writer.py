"""Moves spooled segments into ClickHouse in large inserts, and keeps them through outages.

Closed segments go to ClickHouse in batches of up to INGEST_BATCH_BYTES, one INSERT per batch;
ClickHouse decodes the protobuf itself (mapping.insert_sql). A batch is named by a manifest written
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
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from django.conf import settings

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from ingest import faults, mapping, metrics_mapping, quarantine, records
from ingest.otlp_proto import SPOOL_MESSAGE, clickhouse_schema
from ingest.spool import Batch, Segment, Spool
from store import client
from store.sql import SqlFiles

log = logging.getLogger(__name__)
_sql = SqlFiles(Path(__file__).parent / "sql").text
MAX_BACKOFF_S = 5.0  # retrying costs one failed INSERT; a long wait only delays the drain after an outage
IDLE_S = 0.5  # writer threads past the first wait until nothing was appended for this long
PURGE_AFTER_BYTES = 8 * 1024 * 1024  # smaller batches leave too little to be worth a purge (~30 ms)


@dataclass(frozen=True)
class Kind:
    """What a spool holds and how its records go into ClickHouse: traces (one INSERT into spans) or metrics
    (one INSERT per otel_metrics_* table, each under the batch's token plus the table's name, so a replay
    after a crash between two of them stores only what had not landed)."""

    name: str
    request: type  # the OTLP Export*ServiceRequest class a SpoolRecord extends
    statements: Callable[[str], list[tuple[str, str, str]]]  # source -> [(token suffix, INSERT sql, structure)]
    bisect: bool  # refused batches are bisected down to the spans at fault; otherwise quarantined whole
    schema_file: str


TRACES = Kind("traces", ExportTraceServiceRequest,
              lambda source: [("", mapping.insert_sql(source), mapping.STRUCTURE)], True, "otlp_spool_record.proto")
METRICS = Kind("metrics", ExportMetricsServiceRequest, metrics_mapping.statements, False,
               "otlp_metrics_spool_record.proto")


def _schema_settings(kind: Kind) -> dict:
    """Where ClickHouse finds the OTLP schema: inline for a server, a file in the data dir for chDB.

    TRICKY: chDB caches an inline schema under ./__cache__ of the current directory, so embedded
    mode writes the schema once to the data dir and names it by absolute path instead.
    """
    if not client.is_embedded():
        return {"format_schema_source": "string", "format_schema": clickhouse_schema(kind.request),
                "format_schema_message_name": SPOOL_MESSAGE}
    return {"format_schema": f"{_embedded_schema_file(kind)}:{SPOOL_MESSAGE}"}


@lru_cache(maxsize=2)
def _embedded_schema_file(kind: Kind):
    """The schema file in the data dir, (re)written once per process rather than read at every INSERT."""
    path = settings.DATA_DIR / kind.schema_file
    text = clickhouse_schema(kind.request)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path


# Records are parsed and mapped this many bytes at a time rather than the whole batch at once: a 64 MiB batch
# peaked at ~850 MiB more RSS, ~450 with 4 MiB chunks, for the same CPU (benchmarks/profile_ingest.py).
INPUT_CHUNK_BYTES = 4 * 1024 * 1024


def _insert_settings(token: str, kind: Kind) -> dict:
    # TRICKY: an INSERT commits block by block and deduplicates each block by token_0, token_1, ...
    # A replay must cut the very same blocks, so files are read one after another (max_threads=1):
    # parallel reading would order rows differently and a replay could lose or double rows. The chunks
    # are squashed back into the same blocks as before (up to min_insert_block_size_rows/bytes: 1M rows
    # or 256 MiB, one block for any batch of INGEST_BATCH_BYTES), so chunking changes no block.
    return {
        **_schema_settings(kind), "input_format_protobuf_oneof_presence": 1, "insert_deduplication_token": token,
        "max_threads": 1, "max_insert_threads": 1,
        "input_format_max_block_size_bytes": INPUT_CHUNK_BYTES, "input_format_parallel_parsing": 0,
    }


# TRICKY: what is transient is decided by ClickHouse's error code, never its message. No code at all
# (connection refused, timeout, the fault switch) is transient too. Any other error is taken to come
# from the data: the batch is bisected until the spans at fault are isolated (see Bisection).
TRANSIENT_CODES = {
    3, 159, 160, 164, 202, 203, 209, 210, 236, 241, 242, 243, 319, 394, 425, 439, 999, 1000, 1001,
    60, 81, 497, 516,  # table or database missing, access: a configuration fault, not bad data
}
# Codes that mean "this data cannot be parsed or converted": a lone unit failing with one is at fault
# even when nothing else of its batch got in (any other code needs a sibling that got in as proof).
BAD_DATA_CODES = {6, 26, 27, 32, 33, 38, 41, 69, 70, 72, 117, 321, 444}


def is_transient(exc: client.ClickHouseError) -> bool:
    return exc.code is None or exc.code in TRANSIENT_CODES


def _limits() -> dict:
    return {"max_attributes": settings.INGEST_MAX_ATTRIBUTES, "max_attribute_length": settings.INGEST_MAX_ATTRIBUTE_LENGTH}


def _whole_records(segment: Segment) -> int:
    """Bytes of whole records; a torn last record (never acknowledged) is cut off the file."""
    size = segment.complete_bytes()
    if 0 < size < segment.size():
        log.warning("spool segment %s: cutting a torn last record (never acknowledged)", segment.path.name)
        os.ftruncate(segment.fd, size)
    return size


def _insert(token: str, paths: list[Path] | None = None, data: bytes | None = None, scratch: Path | None = None,
            kind: Kind = TRACES, role: str = "writer") -> None:
    """The INSERT(s) of spool records, from files (`paths`) or bytes (`data`, chDB: through a file in `scratch`),
    under a deduplication token, on the ClickHouse client of `role` (one per writer thread)."""
    faults.check_inserts()
    if client.is_embedded():
        if paths is None:
            return _insert_bytes_embedded(token, data, scratch, kind, role)
        names = ",".join(p.name for p in paths)
        path = f"{paths[0].parent}/{{{names}}}" if len(paths) > 1 else str(paths[0])
        for suffix, sql, structure in kind.statements("file({path:String}, 'Protobuf', {structure:String})"):
            client.command(sql, parameters={"path": path, "structure": structure, **_limits()},
                           settings=_insert_settings(token + suffix, kind), role=role)
    else:
        # A ClickHouse server cannot read our disk: the records are the INSERT's body.
        if data is None:
            data = b"".join(Path(p).read_bytes() for p in paths)
        for suffix, sql, structure in kind.statements("input({structure:String})"):
            client.command(sql + "\nFORMAT Protobuf", parameters={"structure": structure, **_limits()},
                           settings=_insert_settings(token + suffix, kind), data=data, role=role)


def _insert_bytes_embedded(token: str, data: bytes, scratch: Path, kind: Kind = TRACES, role: str = "writer") -> None:
    """chDB reads files only: the part goes through a scratch file in the spool (not a segment name)."""
    scratch.mkdir(exist_ok=True)
    path = scratch / f"{token[-60:]}.part"
    path.write_bytes(data)
    try:
        _insert(token, paths=[path], kind=kind, role=role)
    finally:
        path.unlink(missing_ok=True)


def insert_batch(batch: Batch, kind: Kind = TRACES, role: str = "writer") -> int:
    """Insert a claimed batch in ONE statement; returns how many segments held records.

    TRICKY: every INSERT pays ~0.1 s to analyse the mapping SQL, whatever its size, then ~15 us of
    CPU per span (benchmarks/profile_ingest.py), so several segments go into one INSERT: 200k spans
    took 3.3 CPU-s in 64 MiB batches, 3.9 in 32 MiB and 6.2 in 24 MiB ones (one segment each).
    """
    segments = [s for s in batch.segments if _whole_records(s)]
    if segments:
        _insert(batch.token, paths=[s.path for s in segments], kind=kind, role=role)
    return len(segments)


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
        data = b"".join(os.pread(s.fd, _whole_records(s), 0) for s in self.batch.segments)
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
                _insert(f"{self.batch.token}-{path}{i}", data=b"".join(u.framed() for u in piece),
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


def quarantine_whole(batch: Batch, exc: client.ClickHouseError) -> int:
    """A refused metrics batch goes to quarantine whole: metric records are not bisected (points that passed
    decode's checks and are still refused mean a schema fault, which an operator fixes before replaying)."""
    data = b"".join(os.pread(s.fd, _whole_records(s), 0) for s in batch.segments)
    points: dict = {}
    for unit in records.units(data, count=False):
        points[unit.project_id] = points.get(unit.project_id, 0) + 1
    where = quarantine.put(batch.manifest.parent, batch.token, data, reason=f"clickhouse_{exc.code}", code=exc.code,
                           message=str(exc), spans=points, count=len(batch.segments))
    log.error("metric spool: batch %s refused by ClickHouse (code %s), quarantined in %s: %s", batch.token, exc.code,
              where, str(exc)[:300])
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
    """

    def __init__(self, spool: Spool, interval_s: float, kind: Kind = TRACES, threads: int = 1):
        self.spool, self.interval_s, self.kind, self.threads = spool, interval_s, kind, threads
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._flush_lock = threading.Lock()
        self._busy = [threading.Lock() for _ in range(threads)]  # held by background thread n while it drains
        self.last_error: str = ""

    def start(self) -> None:
        if not self._threads:
            self._threads = [threading.Thread(target=self._run, args=(n,), daemon=True,
                                              name=f"spool-writer-{self.kind.name}-{n}") for n in range(self.threads)]
            for thread in self._threads:
                thread.start()

    def stop(self, drain: bool = True) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()
        self._threads = []
        if drain:
            try:
                self.flush(force=True)
            except client.ClickHouseError as exc:
                log.warning("spool not drained at stop (kept on disk, sent at next start): %s", exc)
        self.spool.close()

    def flush(self, force: bool = False) -> int:
        """Insert every claimable segment now, and wait for the batches background threads hold; returns how many
        segments this call inserted. Raises ClickHouseError on failure."""
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
                return quarantine_whole(batch, exc)
            log.warning("spool batch %s refused (code %s); bisecting to isolate the spans at fault", batch.token,
                        exc.code)
            Bisection(batch, settings.INGEST_BISECT_BUDGET_SECONDS, role).run(exc)
            return len(batch.segments)

    def _run(self, n: int) -> None:
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
                                          threads=threads)
                    self._writer.start()
        return self._writer

    def stop(self, drain: bool = True) -> None:
        with self._lock:
            if self._writer is not None:
                self._writer.stop(drain=drain)
                self._writer = None
