"""OTLP metrics in: authorize -> read (gunzip) -> decode -> validate point by point -> spool (fsync).

The same promise as traces: a 2xx is sent only once the request's valid points are fsynced in the metrics
spool (INGEST_SPOOL_DIR/metrics), and its writer (ingest.writer, kind METRICS) stores every batch exactly
once in the otel_metrics_* tables. The Prometheus scraper (ingest.scrape) enters at spool_metrics().
"""
import json
import math
from collections import Counter

from django.conf import settings
from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest, ExportMetricsServiceResponse)

from ingest.decode import Decoded, accepted_window, read_body
from ingest.errors import IngestError
from ingest.limits import OverLimit, check_rate, count_refused, spool_quota
from ingest.spool import ProjectSpoolFull, SpoolFull
from ingest.writer import METRICS, ProcessWriter, Writer
from projects.keys import authorize
from store.reasons import Reason

# A data point costs about a tenth of a span to store (a dozen columns, no lifecycle): the project's
# spans-per-second limit admits ten points for each span.
POINTS_PER_SPAN = 10
_BRANCHES = ("gauge", "sum", "histogram", "exponential_histogram")


_metrics = ProcessWriter(METRICS, "metrics")


def get_writer() -> Writer:
    """The process's metrics writer (spool INGEST_SPOOL_DIR/metrics), its thread started on first use."""
    return _metrics.get()


def stop_writer(drain: bool = True) -> None:
    _metrics.stop(drain=drain)


def export(authorization: str | None, raw: bytes, encoding: str, content_encoding: str = "") -> Decoded:
    """Store a request's valid points durably; raises KeyError_, IngestError, OverLimit or SpoolFull.

    The key is checked before anything of the body is inflated or parsed, as for traces."""
    key = authorize(authorization, "ingest")
    body = read_body(raw, content_encoding, settings.INGEST_MAX_BODY_BYTES, settings.INGEST_MAX_INFLATE_SECONDS)
    if not body:
        return Decoded(body=b"", accepted=0)
    request = parse_json(body) if encoding == "json" else parse_protobuf(body)
    return _spool(key.project_id, validated(request))


def spool_metrics(project_id: int, request_bytes: bytes) -> Decoded:
    """Validate and spool a serialized ExportMetricsServiceRequest for a project (the scraper's way in)."""
    return _spool(project_id, validated(parse_protobuf(request_bytes)))


def _spool(project_id: int, decoded: Decoded) -> Decoded:
    return spool_request(get_writer(), project_id, decoded, POINTS_PER_SPAN)


def spool_request(writer: Writer, project_id: int, decoded: Decoded, per_span: int) -> Decoded:
    """Make a validated request durable in `writer`'s spool (ingest.logs too), counting `per_span` points or
    records as one span against the project's rate limit and spool share; raises OverLimit or SpoolFull."""
    if not decoded.accepted:
        return decoded
    check_rate(project_id, max(1, decoded.accepted // per_span))
    try:
        writer.spool.append(project_id, decoded.body, decoded.accepted, spool_quota(project_id))
    except ProjectSpoolFull as exc:
        count_refused(project_id, "spool_quota", decoded.accepted // per_span)
        raise OverLimit(Reason.SPOOL_QUOTA, f"{exc}: ingest of this project is behind; retry later",
                        retry_after=settings.INGEST_RETRY_AFTER_SECONDS) from None
    except OSError as exc:
        raise SpoolFull(f"cannot write the spool: {exc}") from exc
    return decoded


def parse_protobuf(body: bytes) -> ExportMetricsServiceRequest:
    try:
        return ExportMetricsServiceRequest.FromString(body)
    except Exception:  # noqa: BLE001 -- upb raises DecodeError, and has raised SystemError on fuzzed bodies
        raise IngestError(Reason.MALFORMED_PROTOBUF, "body is not a valid ExportMetricsServiceRequest "
                          "(truncated or corrupt protobuf, or strings that are not UTF-8)") from None


def parse_json(body: bytes) -> ExportMetricsServiceRequest:
    try:
        doc = json.loads(body.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError) as exc:
        raise IngestError(Reason.MALFORMED_JSON, f"body is not valid JSON: {str(exc)[:200]}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("resourceMetrics", []), list):
        raise IngestError(Reason.MALFORMED_JSON, "body must be an object whose resourceMetrics is a list")
    _drop_exemplars(doc)  # not stored; their ids are hex in OTLP/JSON, which json_format would refuse
    try:
        return json_format.ParseDict(doc, ExportMetricsServiceRequest(), ignore_unknown_fields=True)
    except (json_format.ParseError, ValueError, TypeError) as exc:
        raise IngestError(Reason.MALFORMED_JSON, f"body is not an OTLP ExportMetricsServiceRequest: {str(exc)[:200]}") from None


def _drop_exemplars(node) -> None:
    if isinstance(node, dict):
        node.pop("exemplars", None)
        for value in node.values():
            _drop_exemplars(value)
    elif isinstance(node, list):
        for value in node:
            _drop_exemplars(value)


def validated(request: ExportMetricsServiceRequest) -> Decoded:
    """Drop the points that cannot be stored (with a reason each), re-encode the rest (unknown fields dropped)."""
    rejected, accepted = Counter(), 0
    window = accepted_window()
    for rm in request.resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                accepted += _keep_valid_points(metric, window, rejected)
            kept = [m for m in sm.metrics if m.WhichOneof("data") in _BRANCHES and _points(m)]
            del sm.metrics[:]
            sm.metrics.extend(kept)
    request.DiscardUnknownFields()
    return Decoded(body=request.SerializeToString(), accepted=accepted, rejected=rejected)


def _points(metric):
    branch = metric.WhichOneof("data")
    return getattr(metric, branch).data_points if branch else []


def _keep_valid_points(metric, window: tuple[int, int], rejected: Counter) -> int:
    branch = metric.WhichOneof("data")
    if branch is None:
        return 0  # a metric without data holds no points: nothing to count
    points = getattr(metric, branch).data_points
    if branch == "summary":
        rejected["summary_not_stored"] += len(points)
        return 0
    bad = []
    for i, point in enumerate(points):
        reason = point_problem(metric.name, branch, point, window)
        if reason:
            rejected[reason] += 1
            bad.append(i)
    for i in reversed(bad):
        del points[i]
    return len(points)


def point_problem(name: str, branch: str, point, window: tuple[int, int]) -> str | None:
    """Why a data point cannot be stored, or None."""
    if not name:
        return "metric_without_name"
    if not window[0] <= point.time_unix_nano <= window[1]:
        return "time_out_of_range"  # 0 (unset) included: the retention would drop it at once
    if branch in ("gauge", "sum") and point.WhichOneof("value") == "as_double" and not math.isfinite(point.as_double):
        return "value_not_finite"  # Prometheus staleness markers (NaN) included
    if branch == "histogram" and point.bucket_counts and len(point.bucket_counts) != len(point.explicit_bounds) + 1:
        return "histogram_buckets_mismatch"
    return None


def response(decoded: Decoded) -> ExportMetricsServiceResponse:
    out = ExportMetricsServiceResponse()
    message = decoded.message().replace("span(s)", "data point(s)")
    if decoded.rejected_count or message:
        out.partial_success.rejected_data_points = decoded.rejected_count
        out.partial_success.error_message = message
    return out
