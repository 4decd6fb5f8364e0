"""Moves spooled segments into ClickHouse in large inserts, and keeps them through outages.

Closed segments go to ClickHouse in batches of up to INGEST_BATCH_BYTES, one INSERT per batch;
ClickHouse decodes the protobuf itself (mapping.insert_sql). A batch is named by a manifest written
before its INSERT and used as the deduplication token, so a batch replayed after a crash stores
nothing twice (see spool.Batch). A failed insert leaves the batch in the spool and the writer
retries with back-off; a batch ClickHouse refuses as bad data is moved to quarantine/ instead of
blocking every later batch.
"""
import logging
import os
import re
import threading
from functools import lru_cache

from django.conf import settings

from ingest import mapping
from ingest.otlp_proto import SPOOL_MESSAGE, clickhouse_schema
from ingest.spool import Batch, Segment, Spool
from latency_obs.clickhouse import client

log = logging.getLogger(__name__)
MAX_BACKOFF_S = 30.0


def _schema_settings() -> dict:
    """Where ClickHouse finds the OTLP schema: inline for a server, a file in the data dir for chDB.

    TRICKY: chDB caches an inline schema under ./__cache__ of the current directory, so embedded
    mode writes the schema once to the data dir and names it by absolute path instead.
    """
    if not client.is_embedded():
        return {"format_schema_source": "string", "format_schema": clickhouse_schema(),
                "format_schema_message_name": SPOOL_MESSAGE}
    return {"format_schema": f"{_embedded_schema_file()}:{SPOOL_MESSAGE}"}


@lru_cache(maxsize=1)
def _embedded_schema_file():
    """The schema file in the data dir, (re)written once per process rather than read at every INSERT."""
    path = settings.DATA_DIR / "otlp_spool_record.proto"
    if not path.exists() or path.read_text() != clickhouse_schema():
        path.write_text(clickhouse_schema())
    return path


def _insert_settings(token: str) -> dict:
    # TRICKY: an INSERT commits block by block and deduplicates each block by token_0, token_1, ...
    # A replay must cut the very same blocks, so files are read one after another (max_threads=1):
    # parallel reading would order rows differently and a replay could lose or double rows.
    return {
        **_schema_settings(), "input_format_protobuf_oneof_presence": 1, "insert_deduplication_token": token,
        "max_threads": 1, "max_insert_threads": 1,
    }


# ClickHouse error codes that mean "this data cannot be parsed or converted": retrying cannot help.
BAD_DATA_CODES = {6, 26, 27, 32, 33, 38, 41, 69, 70, 72, 321, 444}
_CODE = re.compile(r"Code: (\d+)")


def is_bad_data(exc: Exception) -> bool:
    match = _CODE.search(str(exc))
    return bool(match) and int(match[1]) in BAD_DATA_CODES


def _limits() -> dict:
    return {"max_attributes": settings.INGEST_MAX_ATTRIBUTES, "max_attribute_length": settings.INGEST_MAX_ATTRIBUTE_LENGTH}


def _whole_records(segment: Segment) -> int:
    """Bytes of whole records; a torn last record (never acknowledged) is cut off the file."""
    size = segment.complete_bytes()
    if 0 < size < segment.size():
        log.warning("spool segment %s: cutting a torn last record (never acknowledged)", segment.path.name)
        os.ftruncate(segment.fd, size)
    return size


def insert_batch(batch: Batch) -> int:
    """Insert a claimed batch in ONE statement; returns how many segments held records.

    TRICKY: every INSERT pays ~0.1-0.3 s to parse and plan the mapping SQL, whatever its size,
    so several segments go into one INSERT (measured: ~25k spans/s one by one, ~40k together).
    """
    segments = [s for s in batch.segments if _whole_records(s)]
    if not segments:
        return 0
    settings_ = _insert_settings(batch.token)
    if client.is_embedded():
        names = ",".join(s.path.name for s in segments)
        path = f"{segments[0].path.parent}/{{{names}}}" if len(segments) > 1 else str(segments[0].path)
        sql = mapping.insert_sql("file({path:String}, 'Protobuf', {structure:String})")
        client.command(sql, parameters={"path": path, "structure": mapping.STRUCTURE, **_limits()}, settings=settings_,
                       role="writer")
    else:
        # A ClickHouse server cannot read our disk: the segments' records are the INSERT's body.
        data = b"".join(os.pread(s.fd, s.size(), 0) for s in segments)
        sql = mapping.insert_sql("input({structure:String})") + "\nFORMAT Protobuf"
        client.command(sql, parameters={"structure": mapping.STRUCTURE, **_limits()}, settings=settings_, data=data,
                       role="writer")
    return len(segments)


class Writer:
    """The background thread of one process; `flush()` drains the spool synchronously."""

    def __init__(self, spool: Spool, interval_s: float):
        self.spool, self.interval_s = spool, interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._flush_lock = threading.Lock()
        self.inserted_segments = 0
        self.last_error: str = ""

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="spool-writer", daemon=True)
            self._thread.start()

    def stop(self, drain: bool = True) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if drain:
            try:
                self.flush(force=True)
            except client.ClickHouseError as exc:
                log.warning("spool not drained at stop (kept on disk, sent at next start): %s", exc)
        self.spool.close()

    def flush(self, force: bool = False) -> int:
        """Insert every claimable segment now; returns how many. Raises ClickHouseError on failure."""
        with self._flush_lock:
            self.spool.refresh_backlog()  # other processes append to the same spool
            self.spool.rotate(force=force)
            done = 0
            while (batch := self.spool.claim_batch(settings.INGEST_BATCH_BYTES)) is not None:
                try:
                    done += insert_batch(batch)
                except client.ClickHouseError as exc:
                    if not is_bad_data(exc):
                        batch.release()
                        raise
                    self._set_aside(batch, exc)
                    continue
                except BaseException:
                    batch.release()
                    raise
                batch.remove()
            self.inserted_segments += done
            self.spool.refresh_backlog()
            return done

    @staticmethod
    def _set_aside(batch: Batch, exc: Exception) -> None:
        """Bad data must not block every later batch: split it, then quarantine the segment at fault."""
        if len(batch.segments) > 1:
            log.warning("spool batch %s refused as bad data; retrying its %d segments one by one", batch.token,
                        len(batch.segments))
            batch.split()
        else:
            where = batch.quarantine()
            log.error("spool segment %s refused by ClickHouse as bad data, moved to %s: %s",
                      batch.segments[0].path.name, where, exc)

    def _run(self) -> None:
        backoff = self.interval_s
        while not self._stop.wait(backoff):
            try:
                self.flush()
                backoff, self.last_error = self.interval_s, ""
            except client.ClickHouseError as exc:
                self.last_error = str(exc)
                backoff = min(MAX_BACKOFF_S, max(backoff * 2, 1.0))
                log.error("spool writer: insert failed, retrying in %.0fs (segments kept): %s", backoff, exc)
            except Exception:  # keep the thread alive: losing it would silently stop ingest
                log.exception("spool writer: unexpected error; retrying")
                backoff = min(MAX_BACKOFF_S, max(backoff * 2, 1.0))
