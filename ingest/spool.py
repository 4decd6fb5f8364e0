"""The append-only spool: a 2xx is sent only once a request's spans are fsynced here.

Each process appends SpoolRecords (see otlp_proto) to its own open segment file, holding an
exclusive flock on it. A segment is closed when it holds enough spans or grows old; the writer of
any process may then claim it by taking the flock. The lock dies with its process, so the segments
of a process killed with -9 are claimed like closed ones, their torn last record cut off (that
record was never acknowledged).
"""
import fcntl
import itertools
import os
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from ingest.otlp_proto import frame, read_varint, spool_record

SUFFIX = ".seg"
BATCH_SUFFIX = ".batch"
QUARANTINE = "quarantine"
_counter = itertools.count()


class SpoolFull(Exception):
    """The spool passed its size limit: ClickHouse is behind or down. Answer 429/503 with Retry-After."""


def _write_manifest(directory: Path, segments: list) -> Path:
    """A durable manifest naming `segments`, under a unique name (the batch's deduplication token)."""
    manifest = directory / f"{segments[0].path.stem}-{uuid.uuid4().hex[:12]}{BATCH_SUFFIX}"
    tmp = manifest.with_suffix(".tmp")
    with open(tmp, "w") as f:
        f.write("\n".join(s.path.name for s in segments))
        f.flush()
        os.fsync(f.fileno())
    tmp.rename(manifest)
    return manifest


@dataclass
class Batch:
    """Segments inserted together under one deduplication token, named by a manifest on disk.

    The manifest is written before the INSERT, so a writer that dies between the INSERT and the
    removal replays exactly this group under the same token, and ClickHouse drops the replay.
    """

    token: str
    segments: list
    manifest: Path

    def remove(self) -> None:
        for segment in self.segments:
            segment.remove()
        self.manifest.unlink(missing_ok=True)

    def release(self) -> None:
        for segment in self.segments:
            segment.release()

    def quarantine(self) -> Path:
        """Move the segments aside (kept for inspection and replay by hand); returns the directory."""
        target = self.manifest.parent / QUARANTINE
        target.mkdir(exist_ok=True)
        for segment in self.segments:
            segment.path.rename(target / segment.path.name)
            segment.release()
        self.manifest.unlink(missing_ok=True)
        return target

    def split(self) -> None:
        """Replace this batch by one single-segment batch per segment (their own manifests and tokens)."""
        for segment in self.segments:
            _write_manifest(self.manifest.parent, [segment])
        self.manifest.unlink(missing_ok=True)
        self.release()


@dataclass
class Segment:
    """A claimed segment, locked by this process until it is removed or released."""

    path: Path
    fd: int

    def complete_bytes(self) -> int:
        """Length of the whole records at the start of the file (a torn tail is ignored)."""
        data = os.pread(self.fd, os.fstat(self.fd).st_size, 0)
        pos = 0
        while pos < len(data):
            try:
                length, start = read_varint(data, pos)
            except (IndexError, ValueError):
                break
            if start + length > len(data):
                break
            pos = start + length
        return pos

    def size(self) -> int:
        return os.fstat(self.fd).st_size

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)
        self.release()

    def release(self) -> None:
        os.close(self.fd)  # closing drops the flock


class Spool:
    def __init__(self, directory: Path, segment_spans: int, max_bytes: int, fsync: bool, max_age_s: float):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.segment_spans, self.max_bytes, self.fsync, self.max_age_s = segment_spans, max_bytes, fsync, max_age_s
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._path: Path | None = None
        self._spans = 0
        self._opened_at = 0.0
        self._backlog_bytes = self.backlog()[1]

    # -- appending (request threads) ---------------------------------------------------------
    def append(self, project_id: int, request_bytes: bytes, spans: int) -> None:
        """Make a request's spans durable; raises SpoolFull when over the size limit."""
        data = frame(spool_record(request_bytes, project_id))
        with self._lock:
            if self._backlog_bytes + len(data) > self.max_bytes:
                raise SpoolFull(f"spool holds {self._backlog_bytes} bytes, limit {self.max_bytes}")
            if self._fd is None:
                self._open()
            offset = os.lseek(self._fd, 0, os.SEEK_END)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self._fd, view):]
                if self.fsync:
                    os.fdatasync(self._fd)
            except OSError:
                # disk full or I/O error: cut the partial record and close, so later records stay readable
                os.ftruncate(self._fd, offset)
                self._close()
                raise
            self._spans += spans
            self._backlog_bytes += len(data)
            if self._spans >= self.segment_spans:
                self._close()

    def _open(self) -> None:
        name = f"{time.time_ns():020d}-{os.getpid()}-{next(_counter):06d}"
        tmp = self.directory / (name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        # TRICKY: lock before the file gets its claimable name, so no writer can claim it half-made.
        self._path = tmp.rename(self.directory / (name + SUFFIX))
        self._fd, self._spans, self._opened_at = fd, 0, time.monotonic()

    def _close(self) -> None:
        os.close(self._fd)
        self._fd = self._path = None

    def rotate(self, force: bool = False) -> None:
        """Close the open segment if it is old enough (or `force`), making it claimable."""
        with self._lock:
            if self._fd is not None and self._spans and (force or time.monotonic() - self._opened_at >= self.max_age_s):
                self._close()

    # -- claiming (writer threads) -----------------------------------------------------------
    def claim(self, paths=None):
        """Yield segments nobody holds, oldest first; the caller removes or releases each."""
        for path in sorted(self.directory.glob("*" + SUFFIX)) if paths is None else paths:
            try:
                fd = os.open(path, os.O_RDWR)
            except FileNotFoundError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                # another writer may have removed it between our open and our lock
                if not path.exists() or os.stat(path).st_ino != os.fstat(fd).st_ino:
                    raise BlockingIOError
            except BlockingIOError:
                os.close(fd)
                continue
            yield Segment(path, fd)

    def claim_batch(self, max_bytes: int) -> Batch | None:
        """The next group to insert: a batch left by a dead writer first, else new segments up to max_bytes."""
        listed: set[str] = set()
        for manifest in sorted(self.directory.glob("*" + BATCH_SUFFIX)):
            names = manifest.read_text().split()
            listed.update(names)
            paths = [self.directory / name for name in names]
            present = sum(p.exists() for p in paths)
            segments = list(self.claim(paths))
            batch = Batch(manifest.stem, segments, manifest)
            if len(segments) < present:
                batch.release()  # TRICKY: a segment is still held by its (living) writer: leave it be
            elif present < len(paths):
                # Segments are removed only after their INSERT succeeded: a missing one means this batch
                # landed and its writer died while cleaning up. Replaying the rest alone would cut
                # different blocks, which deduplication would not recognise.
                batch.remove()
            else:
                return batch
        group, size = [], 0
        for segment in self.claim():
            # TRICKY: a segment named by a manifest goes only through that manifest (same token, same
            # blocks); another writer may hold the manifest's other segments right now.
            if segment.path.name in listed:
                segment.release()
                continue
            if group and size + segment.size() > max_bytes:
                segment.release()
                break
            group.append(segment)
            size += segment.size()
        if not group:
            return None
        manifest = _write_manifest(self.directory, group)
        return Batch(manifest.stem, group, manifest)

    def backlog(self) -> tuple[int, int]:
        """(segments, bytes) waiting in the spool, the open segment included."""
        count = size = 0
        for path in self.directory.glob("*" + SUFFIX):
            try:
                size += path.stat().st_size
                count += 1
            except FileNotFoundError:
                pass
        return count, size

    def refresh_backlog(self) -> int:
        count, size = self.backlog()
        with self._lock:
            self._backlog_bytes = size
        return count

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                self._close()
