"""Two views of the OTLP protobuf, derived from the descriptors opentelemetry-proto ships.

- `clickhouse_schema(request)`: proto3 text for ClickHouse's Protobuf input format, plus `SpoolRecord`,
  which is an ExportTraceServiceRequest (or ExportMetricsServiceRequest) with the project id appended as field 100. Appending one
  encoded field to the request bytes turns them into a SpoolRecord without re-encoding anything.
- `LenientRequest`: ExportTraceServiceRequest with every string field read as bytes, so a body whose
  only fault is bad UTF-8 still parses (strict upb parsing rejects it) and its spans can be kept.
- `AttributeView`: the same bytes read as resources and spans whose attributes are maps of key to
  serialized AnyValue, so the cardinality guards look keys up in C instead of looping over every attribute.
"""
from functools import lru_cache

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor as FD
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

SPOOL_MESSAGE = "SpoolRecord"
PROJECT_FIELD = 100
_SCALARS = {
    FD.TYPE_STRING: "string", FD.TYPE_BYTES: "bytes", FD.TYPE_BOOL: "bool", FD.TYPE_INT64: "int64",
    FD.TYPE_UINT32: "uint32", FD.TYPE_INT32: "int32", FD.TYPE_FIXED64: "fixed64", FD.TYPE_FIXED32: "fixed32",
    FD.TYPE_DOUBLE: "double", FD.TYPE_ENUM: "int32", FD.TYPE_UINT64: "uint64", FD.TYPE_SINT32: "sint32",
    FD.TYPE_SFIXED64: "sfixed64", FD.TYPE_SINT64: "sint64", FD.TYPE_SFIXED32: "sfixed32",
}


def _flat(name: str) -> str:
    return name.replace(".", "_")


@lru_cache(maxsize=2)
def clickhouse_schema(request=ExportTraceServiceRequest) -> str:
    """proto3 text: every message reachable from `request` (an OTLP Export*ServiceRequest class), flat names,
    plus SpoolRecord: the request's first field (resource_spans / resource_metrics) and the project id."""
    seen, out, todo = set(), ['syntax = "proto3";'], [request.DESCRIPTOR]
    while todo:
        desc = todo.pop()
        name = _flat(desc.full_name)
        if name in seen:
            continue
        seen.add(name)
        lines, oneofs = [], {}
        for f in desc.fields:
            if f.type == FD.TYPE_MESSAGE:
                type_name = _flat(f.message_type.full_name)
                todo.append(f.message_type)
            else:
                type_name = _SCALARS[f.type]
            line = f"{'repeated ' if f.is_repeated else ''}{type_name} {f.name} = {f.number};"
            # oneofs are kept so ClickHouse can say which branch (AnyValue's, a data point's value) is present
            if f.containing_oneof is not None:
                oneofs.setdefault(f.containing_oneof.name, []).append(line)
            else:
                lines.append(line)
        body = [f"  {line}" for line in lines]
        body += [f"  oneof {o} {{\n" + "\n".join(f"    {x}" for x in fl) + "\n  }" for o, fl in oneofs.items()]
        out.append(f"message {name} {{\n" + "\n".join(body) + "\n}")
    first = request.DESCRIPTOR.fields[0]
    out.append(
        f"message {SPOOL_MESSAGE} {{\n"
        f"  repeated {_flat(first.message_type.full_name)} {first.name} = 1;\n"
        f"  uint32 project_id = {PROJECT_FIELD};\n}}"
    )
    return "\n".join(out) + "\n"


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def spool_record(request_bytes: bytes, project_id: int) -> bytes:
    """A SpoolRecord's bytes: the request with the project id appended as a varint field."""
    return request_bytes + _varint(PROJECT_FIELD << 3) + _varint(project_id)


def frame(record: bytes) -> bytes:
    """Length-delimited, as ClickHouse's Protobuf format (several messages per file) expects."""
    return _varint(len(record)) + record


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """(value, next position); raises IndexError when buf ends inside the varint."""
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _lenient_class():
    pool = descriptor_pool.DescriptorPool()
    files, todo = {}, [ExportTraceServiceRequest.DESCRIPTOR.file]
    while todo:
        fd = todo.pop()
        if fd.name not in files:
            files[fd.name] = fd
            todo.extend(fd.dependencies)

    def rename(name: str) -> str:
        return name.replace("opentelemetry.proto", "lenient.opentelemetry.proto")

    added: set[str] = set()

    def add(fd):
        if fd.name in added:
            return
        for dep in fd.dependencies:
            add(dep)
        proto = descriptor_pb2.FileDescriptorProto()
        fd.CopyToProto(proto)
        proto.name = "lenient/" + proto.name
        proto.package = rename(proto.package)
        proto.dependency[:] = ["lenient/" + d for d in proto.dependency]
        proto.ClearField("options")
        proto.ClearField("service")
        _relax(proto.message_type, rename)
        pool.Add(proto)
        added.add(fd.name)

    for fd in files.values():
        add(fd)
    desc = pool.FindMessageTypeByName(rename(ExportTraceServiceRequest.DESCRIPTOR.full_name))
    return message_factory.GetMessageClass(desc)


def _relax(messages, rename) -> None:
    for msg in messages:
        for field in msg.field:
            if field.type == descriptor_pb2.FieldDescriptorProto.TYPE_STRING:
                field.type = descriptor_pb2.FieldDescriptorProto.TYPE_BYTES
            if field.type_name:
                field.type_name = rename(field.type_name)
        _relax(msg.nested_type, rename)


LenientRequest = _lenient_class()


# an AnyValue whose strings are bytes: reads any serialized AnyValue of a LenientRequest or a strict one
LenientAnyValue = message_factory.GetMessageClass(
    LenientRequest.DESCRIPTOR.file.pool.FindMessageTypeByName("lenient.opentelemetry.proto.common.v1.AnyValue"))


def _attribute_view_class():
    """AttributeView: wire-compatible with ExportTraceServiceRequest, reading only attributes and span names.

    A map<string, bytes> field is a repeated message of key = 1 and value = 2 on the wire, exactly a
    KeyValue; the value is the AnyValue's bytes. TRICKY: of a repeated key the map keeps the last value
    while ClickHouse reads the first, so callers use it only where it holds as many keys as attributes.
    """
    T = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="latency_obs/attribute_view.proto", package="latency_obs.view",
                                               syntax="proto3")

    def message(name: str, *fields: tuple, map_field: str = "") -> None:
        msg = proto.message_type.add(name=name)
        for field_name, number, kind, type_name, label in fields:
            msg.field.add(name=field_name, number=number, type=kind, label=label, **({"type_name": type_name} if type_name else {}))
        if map_field:
            entry = msg.nested_type.add(name="AttributesEntry")
            entry.options.map_entry = True
            entry.field.add(name="key", number=1, type=T.TYPE_STRING, label=T.LABEL_OPTIONAL)
            entry.field.add(name="value", number=2, type=T.TYPE_BYTES, label=T.LABEL_OPTIONAL)
            msg.field.add(name=map_field, number=9 if name == "Span" else 1, type=T.TYPE_MESSAGE,
                          type_name=f".latency_obs.view.{name}.AttributesEntry", label=T.LABEL_REPEATED)

    one, many = T.LABEL_OPTIONAL, T.LABEL_REPEATED
    message("Span", ("name", 5, T.TYPE_STRING, "", one), map_field="attributes")
    message("Resource", map_field="attributes")
    message("ScopeSpans", ("spans", 2, T.TYPE_MESSAGE, ".latency_obs.view.Span", many))
    message("ResourceSpans", ("resource", 1, T.TYPE_MESSAGE, ".latency_obs.view.Resource", one),
            ("scope_spans", 2, T.TYPE_MESSAGE, ".latency_obs.view.ScopeSpans", many))
    message("Request", ("resource_spans", 1, T.TYPE_MESSAGE, ".latency_obs.view.ResourceSpans", many))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("latency_obs.view.Request"))


AttributeView = _attribute_view_class()
