"""One export, whatever the transport: authorize -> read (gunzip) -> decode -> validate -> fold -> spool.

The HTTP view and the gRPC servicer both call `export`; the process-wide spool and writer live here.
"""
from functools import partial

from django.conf import settings

from ingest import cardinality, logs, metrics
from ingest.decode import Decoded, decode_json, decode_protobuf, read_body
from ingest.limits import OverLimit, check_rate, count_refused, spool_quota
from ingest.spool import ProjectSpoolFull, SpoolFull
from ingest.writer import TRACES, ProcessWriter, Writer
from projects.keys import authorize
from store.reasons import Reason

__all__ = ["export", "get_writer", "start_writer", "stop_writer", "OverLimit", "SpoolFull"]
_traces = ProcessWriter(TRACES)


def get_writer() -> Writer:
    """The process's trace writer, its thread started on first use."""
    return _traces.get()


def start_writer() -> Writer:
    """Start the trace, metrics and logs writers at boot: each replays what its spool holds from before a stop or
    a crash now, not when its kind's next request arrives."""
    metrics.get_writer()
    logs.get_writer()
    return get_writer()


def flush_started_writers() -> None:
    """Store what each running writer's spool holds now (traces, metrics, logs); a writer not started stays so."""
    for writer in (_traces, metrics._metrics, logs._logs):
        writer.flush_if_started()


def stop_writer(drain: bool = True) -> None:
    """Stop the trace writer and, when they were started, the metrics and logs writers (ingest.metrics, .logs)."""
    _traces.stop(drain=drain)
    metrics.stop_writer(drain=drain)
    logs.stop_writer(drain=drain)


def export(authorization: str | None, raw: bytes, encoding: str, content_encoding: str = "") -> Decoded:
    """Store a request's valid spans durably; raises KeyError_, IngestError, OverLimit or SpoolFull.

    `raw` is the body as received (gzip when content_encoding says so; gRPC has inflated it already).
    TRICKY: the key is checked before anything of the body is inflated or parsed, so a request without
    a valid key costs a key lookup, not a 64 MiB gunzip.
    """
    key = authorize(authorization, "ingest")
    body = read_body(raw, content_encoding, settings.INGEST_MAX_BODY_BYTES, settings.INGEST_MAX_INFLATE_SECONDS)
    if not body:
        return Decoded(body=b"", accepted=0)  # OTLP: an empty request is a success
    decode = decode_json if encoding == "json" else decode_protobuf
    decoded = decode(body, settings.INGEST_MAX_ATTRIBUTES, partial(cardinality.fold, key.project_id))
    if decoded.accepted:
        check_rate(key.project_id, decoded.accepted)  # OverLimit: only this project waits
        try:
            get_writer().spool.append(key.project_id, decoded.body, decoded.accepted, spool_quota(key.project_id))
        except ProjectSpoolFull as exc:
            count_refused(key.project_id, "spool_quota", decoded.accepted)
            raise OverLimit(Reason.SPOOL_QUOTA, f"{exc}: ingest of this project is behind; retry later",
                            retry_after=settings.INGEST_RETRY_AFTER_SECONDS) from None
        except OSError as exc:  # disk full or failing: nothing was acknowledged, the client retries later
            raise SpoolFull(f"cannot write the spool: {exc}") from exc
        cardinality.count_folded(key.project_id, decoded.folded)
    return decoded
