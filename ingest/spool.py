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
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ingest.otlp_proto import frame, read_varint, spool_record

SUFFIX = ".seg"
BATCH_SUFFIX = ".batch"
QUARANTINE = "quarantine"
_counter = itertools.count()
MAX_VARINT_BYTES = 10  # a uint64 as a varint; read_varint refuses longer ones


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


@dataclass
class Segment:
    """A claimed segment, locked by this process until it is removed or released."""

    path: Path
    fd: int

    def complete_bytes(self) -> int:
        """Length of the whole records at the start of the file (a torn tail is ignored).

        TRICKY: only each record's length prefix is read (a varint: 10 bytes at most), not the file: a segment of
        20,000 spans is ~14 MiB, whose copy and walk held the GIL 5 ms quiet (up to ~35 ms in a busy `up`, py-spy),
        against 0.05 ms for its 40 prefixes."""
        size, pos = os.fstat(self.fd).st_size, 0
        while pos < size:
            try:
                length, start = read_varint(os.pread(self.fd, MAX_VARINT_BYTES, pos), 0)
            except (IndexError, ValueError):
                break
            if pos + start + length > size:
                break
            pos += start + length
        return pos

    def size(self) -> int:
        return os.fstat(self.fd).st_size

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)
        self.release()

    def release(self) -> None:
        os.close(self.fd)  # closing drops the flock


class ProjectSpoolFull(Exception):
    """One project holds its share of the spool: that project (only) must back off."""

    def __init__(self, project_id: int, held: int, limit: int):
        super().__init__(f"project {project_id} holds {held} bytes of the spool, its share is {limit}")
        self.project_id, self.held, self.limit = project_id, held, limit


_PROJECT = re.compile(r"-p(\d+)$")


def project_of(path: Path) -> int | None:
    """The project whose records a segment holds (named at open), None for unnamed (older) segments."""
    match = _PROJECT.search(path.stem)
    return int(match[1]) if match else None


@dataclass
class _Open:
    """The segment this process appends one project's records to, and how much of it is fsynced.

    Group commit: a record is written under the spool's lock, but fsynced outside it, under the segment's
    own sync_lock; one fdatasync makes durable every record written before it, so requests arriving
    together share one instead of queueing for one each (one took ~3 ms, serialized: ~1.3 s of 200k spans).
    Lock order: the spool's lock, then a sync_lock; never the other way round.
    """

    fd: int
    path: Path
    opened_at: float
    spans: int = 0
    written: int = 0  # end of the last whole record written
    synced: int = 0  # end of what an fdatasync has made durable
    failed: bool = False  # an fdatasync failed: what follows `synced` was never acknowledged
    closed: bool = False
    sync_lock: threading.Lock = field(default_factory=threading.Lock)


class Spool:
    """Segments hold one project's records each, so the spool's share per project is known from file names."""

    def __init__(self, directory: Path, segment_spans: int, max_bytes: int, fsync: bool, max_age_s: float):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.segment_spans, self.max_bytes, self.fsync, self.max_age_s = segment_spans, max_bytes, fsync, max_age_s
        self._lock = threading.Lock()
        self._open_segments: dict[int, _Open] = {}
        self._backlog_bytes = 0
        self._project_bytes: dict[int, int] = {}
        self.last_append_at = 0.0  # time.monotonic() of this process's last append
        self.refresh_backlog()

    # -- appending (request threads) ---------------------------------------------------------
    def append(self, project_id: int, request_bytes: bytes, spans: int, project_max_bytes: int | None = None) -> None:
        """Make a request's spans durable; raises SpoolFull over the size limit, ProjectSpoolFull over the
        project's share (`project_max_bytes`, None = no share of its own), OSError when the disk fails."""
        data = frame(spool_record(request_bytes, project_id))
        with self._lock:
            if self._backlog_bytes + len(data) > self.max_bytes:
                raise SpoolFull(f"spool holds {self._backlog_bytes} bytes, limit {self.max_bytes}")
            held = self._project_bytes.get(project_id, 0)
            if project_max_bytes is not None and held + len(data) > project_max_bytes:
                raise ProjectSpoolFull(project_id, held, project_max_bytes)
            segment = self._open_segments.get(project_id)
            if segment is not None and segment.failed:
                self._retire(self._open_segments.pop(project_id))
                segment = None
            segment = segment or self._open(project_id)
            offset = os.lseek(segment.fd, 0, os.SEEK_END)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(segment.fd, view):]
            except OSError:
                # disk full or I/O error: cut the partial record and close, so later records stay readable
                os.ftruncate(segment.fd, offset)
                self._retire(self._open_segments.pop(project_id))
                raise
            segment.written = offset + len(data)
            segment.spans += spans
            self.last_append_at = time.monotonic()
            self._backlog_bytes += len(data)
            self._project_bytes[project_id] = held + len(data)
            full = segment.spans >= self.segment_spans
            if full:
                del self._open_segments[project_id]  # no more records: closed once they are durable
        try:
            if self.fsync:
                self._sync(segment, offset + len(data))
        finally:
            if full:
                self._retire(segment)

    @staticmethod
    def _sync(segment: _Open, end: int) -> None:
        """Return once the segment is durable up to `end`: fsynced by this thread or by one that came before."""
        with segment.sync_lock:
            if segment.synced >= end:
                return
            if segment.failed or segment.closed:
                raise OSError(f"spool segment {segment.path.name}: an earlier fdatasync failed")
            written = segment.written  # every record up to here was written before the fdatasync starts
            try:
                os.fdatasync(segment.fd)
            except OSError:
                segment.failed = True  # the next append opens a new segment; _retire cuts what was not synced
                raise
            segment.synced = written

    def _retire(self, segment: _Open) -> None:
        """Close a segment no longer appended to (making it claimable), once all its records are durable.

        TRICKY: under its sync_lock, so no other thread is inside fdatasync(fd) when the fd is closed."""
        with segment.sync_lock:
            if segment.closed:
                return
            if self.fsync and not segment.failed and segment.synced < segment.written:
                try:
                    os.fdatasync(segment.fd)
                    segment.synced = segment.written
                except OSError:
                    segment.failed = True
            if segment.failed:
                os.ftruncate(segment.fd, segment.synced)  # the rest was answered with an error, never a 2xx
            os.close(segment.fd)  # closing drops the flock
            segment.closed = True

    def _open(self, project_id: int) -> _Open:
        name = f"{time.time_ns():020d}-{os.getpid()}-{next(_counter):06d}-p{project_id}"
        tmp = self.directory / (name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        # TRICKY: lock before the file gets its claimable name, so no writer can claim it half-made.
        path = tmp.rename(self.directory / (name + SUFFIX))
        segment = self._open_segments[project_id] = _Open(fd, path, time.monotonic())
        return segment

    def rotate(self, force: bool = False) -> None:
        """Close the open segments that are old enough (or all, `force`), making them claimable."""
        with self._lock:
            now = time.monotonic()
            for project_id, segment in list(self._open_segments.items()):
                if segment.failed or (segment.spans and (force or now - segment.opened_at >= self.max_age_s)):
                    self._retire(self._open_segments.pop(project_id))

    # -- claiming (writer threads) -----------------------------------------------------------
    def claim(self, paths=None):
        """Yield segments nobody holds, oldest first but taking turns between projects (a flooding
        project's backlog does not go before another's fresh spans); the caller removes or releases each."""
        for path in _taking_turns(self.directory.glob("*" + SUFFIX)) if paths is None else paths:
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
            try:
                names = manifest.read_text().split()
            except FileNotFoundError:  # another writer's batch landed and was cleaned up since the listing
                continue
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
        """(segments, bytes) waiting in the spool, open segments included."""
        count, by_project = self.backlog_by_project()
        return count, sum(by_project.values())

    def backlog_by_project(self) -> tuple[int, dict]:
        """(segments, {project id or None: bytes}) waiting in the spool, open segments included."""
        count, by_project = 0, {}
        for path in self.directory.glob("*" + SUFFIX):
            try:
                size = path.stat().st_size
            except FileNotFoundError:
                continue
            count += 1
            project = project_of(path)
            by_project[project] = by_project.get(project, 0) + size
        return count, by_project

    def project_bytes(self, project_id: int) -> int:
        """Bytes of this project's spans in the spool, as of the last refresh or append."""
        return self._project_bytes.get(project_id, 0)

    def refresh_backlog(self) -> int:
        """Re-read what waits in the spool (other processes append to it too); returns the segment count.
        TRICKY: read under the append lock: an append between reading the sizes and keeping them would be lost
        from the project's bytes, and its next requests let past its share."""
        with self._lock:
            count, by_project = self.backlog_by_project()
            self._backlog_bytes = sum(by_project.values())
            self._project_bytes = by_project
        return count

    def close(self) -> None:
        with self._lock:
            for project_id in list(self._open_segments):
                self._retire(self._open_segments.pop(project_id))


def _taking_turns(paths) -> list[Path]:
    """Oldest first, one segment per project per turn: [a1, b1, a2, b2, a3 ...]."""
    turns: dict = {}
    for path in sorted(paths):
        turns.setdefault(project_of(path), []).append(path)
    queues = sorted(turns.values(), key=lambda q: q[0].name)
    return [q[i] for i in range(max(map(len, queues), default=0)) for q in queues if i < len(q)]
