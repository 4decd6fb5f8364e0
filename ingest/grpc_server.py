"""OTLP/gRPC TraceService, MetricsService and LogsService Export: the same keys, decoding, spools and writers as
OTLP/HTTP.

The method is registered without a request deserializer, so the handler gets the raw bytes and
runs them through the same pipeline as HTTP (strict-then-lenient parsing, span-by-span checks).
"""
import errno
import logging
import os
import socket
from concurrent import futures
from typing import NamedTuple

import grpc
from django.conf import settings
from django.db import close_old_connections
from google.protobuf.any_pb2 import Any
from google.protobuf.duration_pb2 import Duration
from google.rpc import error_details_pb2, status_pb2

from ingest import logs, metrics
from ingest.errors import IngestError
from ingest.pipeline import OverLimit, SpoolFull, export
from ingest.responses import export_response
from projects.keys import KeyError_

log = logging.getLogger(__name__)
SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
METRICS_SERVICE = "opentelemetry.proto.collector.metrics.v1.MetricsService"
LOGS_SERVICE = "opentelemetry.proto.collector.logs.v1.LogsService"
STATUS_FOR_HTTP = {413: grpc.StatusCode.RESOURCE_EXHAUSTED}


class _Status(NamedTuple):
    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple


class _AbortStatus(_Status, grpc.Status):
    pass


def _retry_later(context, code: grpc.StatusCode, message: str, seconds: int) -> None:
    """Abort with RetryInfo: the OTLP way to ask a gRPC client to back off for `seconds`.

    TRICKY: the spec puts RetryInfo in the status details (grpc-status-details-bin, read by the Collector and
    the Go SDK), but the Python SDK exporter reads only a `google.rpc.retryinfo-bin` trailer: send both.
    """
    retry_info = error_details_pb2.RetryInfo(retry_delay=Duration(seconds=seconds))
    delay = Any()
    delay.Pack(retry_info)
    detail = status_pb2.Status(code=code.value[0], message=message, details=[delay])
    trailers = (("grpc-status-details-bin", detail.SerializeToString()),
                ("google.rpc.retryinfo-bin", retry_info.SerializeToString()))
    context.abort_with_status(_AbortStatus(code, message, trailers))


def _throttled(context) -> None:
    """spool_full: ingest as a whole is behind (UNAVAILABLE), every project waits."""
    message = "spool_full: ingest is behind (ClickHouse slow or down); retry later"
    _retry_later(context, grpc.StatusCode.UNAVAILABLE, message, settings.INGEST_RETRY_AFTER_SECONDS)


def export_handler(raw: bytes, context) -> bytes:
    return _handle(raw, context, export, export_response)


def metrics_handler(raw: bytes, context) -> bytes:
    return _handle(raw, context, metrics.export, metrics.response)


def logs_handler(raw: bytes, context) -> bytes:
    return _handle(raw, context, logs.export, logs.response)


def _handle(raw: bytes, context, export_, answer) -> bytes:
    metadata = dict(context.invocation_metadata())
    # gRPC threads are not Django requests: recycle their DB connections as a request would.
    close_old_connections()
    try:
        decoded = export_(metadata.get("authorization"), raw, "protobuf")
    except KeyError_ as exc:
        code = grpc.StatusCode.PERMISSION_DENIED if exc.status == 403 else grpc.StatusCode.UNAUTHENTICATED
        context.abort(code, f"{exc.reason}: {exc}")
    except IngestError as exc:
        context.abort(STATUS_FOR_HTTP.get(exc.status, grpc.StatusCode.INVALID_ARGUMENT), f"{exc.reason}: {exc.message}")
    except OverLimit as exc:  # this project only: RESOURCE_EXHAUSTED, which exporters retry after RetryInfo
        _retry_later(context, grpc.StatusCode.RESOURCE_EXHAUSTED, f"{exc.reason}: {exc.message}", exc.retry_after)
    except SpoolFull:
        _throttled(context)
    finally:
        close_old_connections()
    return answer(decoded).SerializeToString()


def build_server(host: str, port: int, workers: int = 8) -> tuple[grpc.Server, int]:
    """A gRPC server with TraceService, MetricsService and LogsService registered; returns (server, bound port).
    Not started.

    Raises OSError (errno EADDRINUSE when another process listens there) when the port cannot be bound."""
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="otlp-grpc"),
        # TRICKY: gRPC sets SO_REUSEPORT by default, so a second process bound the same port and the kernel split
        # exports between the two (the other's keys failed as unknown_key): refuse to share it.
        options=[("grpc.max_receive_message_length", settings.INGEST_MAX_BODY_BYTES), ("grpc.so_reuseport", 0)],
    )
    handler = grpc.method_handlers_generic_handler(
        SERVICE, {"Export": grpc.unary_unary_rpc_method_handler(export_handler)}
    )
    metrics_handler_ = grpc.method_handlers_generic_handler(
        METRICS_SERVICE, {"Export": grpc.unary_unary_rpc_method_handler(metrics_handler)}
    )
    logs_handler_ = grpc.method_handlers_generic_handler(
        LOGS_SERVICE, {"Export": grpc.unary_unary_rpc_method_handler(logs_handler)}
    )
    server.add_generic_rpc_handlers((handler, metrics_handler_, logs_handler_))
    if port:
        _probe(host, port)  # gRPC would only log a multi-line error and say "failed": learn why first
    try:
        bound = server.add_insecure_port(f"{host}:{port}")
    except RuntimeError:  # grpcio >= 1.6x raises "Failed to bind" where older versions returned 0
        bound = 0
    if not bound:
        raise OSError(errno.EADDRINUSE, os.strerror(errno.EADDRINUSE))
    return server, bound


def _probe(host: str, port: int) -> None:
    """Bind a plain socket where the server will listen (SO_REUSEADDR as gRPC sets it, so connections of an earlier
    run in TIME_WAIT do not count); raises the OSError (in use, no such address) that gRPC would not tell."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(address)
