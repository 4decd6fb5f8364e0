"""Spool records as units the writer can insert in parts: whole requests, then halves of their spans.

A record is a SpoolRecord (see otlp_proto): an ExportTraceServiceRequest's bytes with the project id
appended as field 100. When ClickHouse refuses a batch for its data, the writer bisects it into these
units to find the spans at fault; splitting is deterministic, so a replayed bisection cuts the same
parts (and their deduplication tokens match).
"""
from dataclasses import dataclass

from google.protobuf.message import DecodeError

from ingest.otlp_proto import PROJECT_FIELD, LenientRequest, frame, read_varint, spool_record

_PROJECT_TAG = bytes([(PROJECT_FIELD << 3) & 0x7F | 0x80, PROJECT_FIELD >> 4])  # field 100, varint: a0 06


@dataclass
class Unit:
    """Part of a batch: one request's spans (all, or a slice of them) for one project."""

    project_id: int | None  # None: the record could not be read at all
    request: bytes
    spans: int  # -1 when unknown (unreadable record)

    def framed(self) -> bytes:
        if self.project_id is None:
            return frame(self.request)  # kept byte for byte: it goes to quarantine as it came
        return frame(spool_record(self.request, self.project_id))

    def halves(self) -> "tuple[Unit, Unit] | None":
        """The unit's spans cut in two requests (resource and scope kept on each), None for one span or less."""
        if self.spans < 2:
            return None
        request = LenientRequest.FromString(self.request)
        spans = [(r, s, i) for r, rs in enumerate(request.resource_spans) for s, ss in enumerate(rs.scope_spans)
                 for i in range(len(ss.spans))]
        mid = len(spans) // 2
        return self._part(request, spans[:mid]), self._part(request, spans[mid:])

    def _part(self, request, keep: list) -> "Unit":
        wanted = {}
        for r, s, i in keep:
            wanted.setdefault(r, {}).setdefault(s, []).append(i)
        part = type(request)()
        for r, scopes in wanted.items():
            rs = request.resource_spans[r]
            out = part.resource_spans.add(resource=rs.resource, schema_url=rs.schema_url)
            for s, indexes in scopes.items():
                ss = rs.scope_spans[s]
                target = out.scope_spans.add(scope=ss.scope, schema_url=ss.schema_url)
                target.spans.extend(ss.spans[i] for i in indexes)
        return Unit(self.project_id, part.SerializeToString(), len(keep))


def split_record(record: bytes) -> tuple[bytes, int] | None:
    """(request bytes, project id) of a record the spool wrote (the project field is its last); None if not."""
    for cut in range(len(record) - 3, max(len(record) - 13, -1), -1):
        if record[cut:cut + 2] != _PROJECT_TAG:
            continue
        try:
            project_id, end = read_varint(record, cut + 2)
        except (IndexError, ValueError):
            continue
        if end == len(record):
            return record[:cut], project_id
    return None


def units(data: bytes, count: bool = True) -> list[Unit]:
    """The whole records of a segment's bytes as units (a torn tail was cut before); count=False leaves the
    request unparsed (spans -1): a metrics record, whose points are not spans."""
    out, pos = [], 0
    while pos < len(data):
        length, start = read_varint(data, pos)
        record = data[start:start + length]
        pos = start + length
        out.append(_unit(record, count))
    return out


def _unit(record: bytes, count: bool = True) -> Unit:
    parsed = split_record(record)
    if parsed is None:
        return Unit(None, record, -1)
    request, project_id = parsed
    if not count:
        return Unit(project_id, request, -1)
    try:
        spans = sum(len(ss.spans) for rs in LenientRequest.FromString(request).resource_spans for ss in rs.scope_spans)
    except DecodeError:
        return Unit(None, record, -1)
    return Unit(project_id, request, spans)
