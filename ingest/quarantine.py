"""Spans ClickHouse refused, kept aside with their reason until an operator replays them.

Each entry is two files in <spool>/quarantine/: `<name>.seg` (spool records, the same format as the
spool's segments) and `<name>.json` (why: reason code, ClickHouse's error code and message, spans per
project). Names are derived from the batch's token and the bisection path, so a writer that dies after
quarantining and replays the batch rewrites the same entry instead of adding a second.
Replaying moves the records back into the spool as an ordinary closed segment; the writer of any process
then inserts them (again quarantining what ClickHouse still refuses).
"""
import json
import os
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ingest.spool import QUARANTINE, SUFFIX

META = ".json"


@dataclass
class Entry:
    name: str
    reason: str
    code: int | None
    message: str
    spans: dict  # project id (str) -> spans
    records: int
    at: str

    @property
    def span_count(self) -> int:
        return sum(self.spans.values())


def _durable_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    tmp.rename(path)


def put(spool_dir: Path, name: str, records: bytes, *, reason: str, code: int | None, message: str,
        spans: dict, count: int) -> Path:
    """Store one entry durably; the .seg first, so a listed .json always has its records."""
    directory = Path(spool_dir) / QUARANTINE
    directory.mkdir(exist_ok=True)
    _durable_write(directory / (name + SUFFIX), records)
    meta = {"reason": reason, "code": code, "message": message[:2000], "spans": {str(k): v for k, v in spans.items()},
            "records": count, "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    _durable_write(directory / (name + META), json.dumps(meta, sort_keys=True).encode())
    return directory / (name + SUFFIX)


def entries(spool_dir: Path) -> list[Entry]:
    """Every quarantined entry, oldest first (an entry whose records are gone is not listed)."""
    directory = Path(spool_dir) / QUARANTINE
    found = []
    for meta_path in sorted(directory.glob("*" + META), key=lambda p: p.stat().st_mtime) if directory.exists() else []:
        if not meta_path.with_suffix(SUFFIX).exists():
            continue
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError):
            continue
        found.append(Entry(meta_path.stem, meta.get("reason", ""), meta.get("code"), meta.get("message", ""),
                           meta.get("spans", {}), meta.get("records", 0), meta.get("at", "")))
    return found


def spans_by_project(spool_dir: Path) -> dict[str, int]:
    """Quarantined spans per project id (as a string); entries of older versions without counts add 0."""
    totals: dict[str, int] = {}
    for entry in entries(spool_dir):
        for project, n in entry.spans.items():
            totals[project] = totals.get(project, 0) + n
    return totals


def replay(spool_dir: Path, name: str) -> Path:
    """Move an entry's records back into the spool as a closed segment; returns its new path.

    TRICKY: the new name sorts after the spool's current segments and is unique, and the rename is atomic,
    so a writer claims it whole or not at all.
    """
    directory = Path(spool_dir) / QUARANTINE
    records = directory / (name + SUFFIX)
    if not records.exists():
        raise FileNotFoundError(f"no quarantined entry {name!r}")
    target = Path(spool_dir) / f"{time.time_ns():020d}-{os.getpid()}-replay-{name[-40:]}{SUFFIX}"
    records.rename(target)
    (directory / (name + META)).unlink(missing_ok=True)
    return target
