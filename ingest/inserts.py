"""The INSERT statements of spool records: what a spool holds (Kind), the settings that make an INSERT
deduplicable and lean, and which ClickHouse errors are transient. ClickHouse decodes the protobuf itself
(mapping.insert_sql, metrics_mapping.statements); ingest.writer decides when and what to insert.
"""
import logging
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from django.conf import settings

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from ingest import faults, logs_mapping, mapping, metrics_mapping
from ingest.otlp_proto import SPOOL_MESSAGE, clickhouse_schema
from ingest.spool import Batch, Segment
from store import client

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Kind:
    """What a spool holds and how its records go into ClickHouse: traces (one INSERT into spans), metrics
    (one INSERT per otel_metrics_* table, each under the batch's token plus the table's name, so a replay
    after a crash between two of them stores only what had not landed) or logs (one INSERT into otel_logs)."""

    name: str
    request: type  # the OTLP Export*ServiceRequest class a SpoolRecord extends
    statements: Callable[[str], list[tuple[str, str, str]]]  # source -> [(token suffix, INSERT sql, structure)]
    bisect: bool  # refused batches are bisected down to the spans at fault; otherwise quarantined whole
    schema_file: str
    blocks: bool = False  # written in blocks of INGEST_BLOCK_ROWS rows; otherwise the whole INSERT in one block


# TRICKY: spans are written in blocks of ~8k rows (INGEST_BLOCK_ROWS), not one block per batch: sorting and
# writing a batch's ~80k rows at once held ~380 MiB more (the sorted copy beside the squashed block, and for a
# wide part two 1 MiB buffers per column stream); in 16k-row blocks into compact parts (store migration 0032)
# ~170 MiB tracked, in 8k-row blocks ~100, for ~5 % more INSERT time (their merges are column by column: store
# migration 0047; docs/ingest-performance.md). Metric points are small rows: one block per batch.
TRACES = Kind("traces", ExportTraceServiceRequest,
              lambda source: [("", mapping.insert_sql(source), mapping.STRUCTURE)], True, "otlp_spool_record.proto",
              blocks=True)
METRICS = Kind("metrics", ExportMetricsServiceRequest, metrics_mapping.statements, False,
               "otlp_metrics_spool_record.proto")
# Log records carry bodies (a GenAI event's whole prompt or completion): written in blocks like spans, so a batch
# of large records is not held and sorted as one block.
LOGS = Kind("logs", ExportLogsServiceRequest, logs_mapping.statements, False, "otlp_logs_spool_record.proto",
            blocks=True)


def _schema_settings(kind: Kind) -> dict:
    """Where ClickHouse finds the OTLP schema: inline for a server, a file in the data dir for chDB.

    TRICKY: chDB caches an inline schema under ./__cache__ of the current directory, so embedded
    mode writes the schema once to the data dir and names it by absolute path instead.
    """
    if not client.is_embedded():
        return {"format_schema_source": "string", "format_schema": _schema_text(kind.request),
                "format_schema_message_name": SPOOL_MESSAGE}
    return {"format_schema": f"{_embedded_schema_file(kind)}:{SPOOL_MESSAGE}"}


@lru_cache(maxsize=4)
def _schema_text(request: type) -> str:
    """clickhouse_schema of one kind, kept for every kind (its own cache holds two of the three)."""
    return clickhouse_schema(request)


@lru_cache(maxsize=4)
def _embedded_schema_file(kind: Kind):
    """The schema file in the data dir, (re)written once per process rather than read at every INSERT."""
    path = settings.DATA_DIR / kind.schema_file
    text = _schema_text(kind.request)
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
    # are squashed into blocks of at least INGEST_BLOCK_ROWS rows (or ~1 KiB a row of bytes; otherwise the
    # defaults of 1M rows or 256 MiB: one block for any batch of INGEST_BATCH_BYTES): the same chunks, so the
    # same blocks, on a replay.
    rows = settings.INGEST_BLOCK_ROWS
    blocks = {"min_insert_block_size_rows": rows, "min_insert_block_size_bytes": rows * 1024} if kind.blocks else {}
    return {
        **_schema_settings(kind), "input_format_protobuf_oneof_presence": 1, "insert_deduplication_token": token,
        # TRICKY: the analyzer's pass that adds comparisons implied by AND chains walks every AND of the mapping (it
        # has hundreds, and no filter for them to help): 40 % of an INSERT's fixed cost, which every batch pays,
        # however small (an empty batch of spans: 313 -> 187 ms in chDB 26.9; reads keep the pass, they use it)
        "optimize_and_compare_chain": 0,
        # the query plan's optimizations (filter push-down, reading in order, ...) have nothing to act on in a read of
        # spool files with no key and no filter, and cost every INSERT a sixth of its fixed cost (a 60-span batch:
        # 157 -> 130 ms of CPU, chDB 26.9; a 20,000-span one within noise: /tmp probe, 2026-11-29)
        "query_plan_enable_optimizations": 0,
        "max_threads": 1, "max_insert_threads": 1,
        "input_format_max_block_size_bytes": INPUT_CHUNK_BYTES, "input_format_parallel_parsing": 0, **blocks,
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


def whole_records(segment: Segment) -> int:
    """Bytes of whole records; a torn last record (never acknowledged) is cut off the file."""
    size = segment.complete_bytes()
    if 0 < size < segment.size():
        log.warning("spool segment %s: cutting a torn last record (never acknowledged)", segment.path.name)
        os.ftruncate(segment.fd, size)
    return size


def insert_records(token: str, paths: list[Path] | None = None, data: bytes | None = None,
                   scratch: Path | None = None, kind: Kind = TRACES, role: str = "writer") -> None:
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
        insert_records(token, paths=[path], kind=kind, role=role)
    finally:
        path.unlink(missing_ok=True)


def insert_batch(batch: Batch, kind: Kind = TRACES, role: str = "writer") -> int:
    """Insert a claimed batch in ONE statement; returns how many segments held records.

    TRICKY: every INSERT pays ~0.1 s to analyse the mapping SQL, whatever its size, then ~15 us of
    CPU per span (benchmarks/profile_ingest.py), so several segments go into one INSERT: 200k spans
    took 3.3 CPU-s in 64 MiB batches, 3.9 in 32 MiB and 6.2 in 24 MiB ones (one segment each).
    """
    segments = [s for s in batch.segments if whole_records(s)]
    if segments:
        insert_records(batch.token, paths=[s.path for s in segments], kind=kind, role=role)
    return len(segments)
