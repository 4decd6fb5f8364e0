"""The HTTP server of `up` and `serve_web` (web UI, API, OTLP/HTTP): waitress, with limits so that slow or
abusive clients cannot starve everyone else.

How waitress spends its resources (waitress/channel.py, server.py): one async loop reads every connection and
buffers a request's headers and body (past 512 KiB in a temp file) before a worker thread sees it, so a client
that sends slowly holds a connection, not a thread. At `connection_limit` open sockets (its listening socket
and wake-up pipe included) the loop stops accepting and new clients wait in the kernel's backlog: 101 slow
clients against waitress's default of 100 stalled every page, API call and export. `channel_timeout` closes
only connections idle that long; a client that sends a byte now and then is never idle, so a request must
also arrive whole within WEB_REQUEST_DEADLINE_SECONDS. Both are checked every `cleanup_interval` seconds.
"""
import logging
import resource
import time

from django.conf import settings
from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer

log = logging.getLogger("latency_obs.web")
RECV_BYTES = 256 * 1024  # what waitress's loop reads from a connection at once (its default: 8 KiB)


def web_server(application, host: str, port: int, threads: int) -> TcpWSGIServer:
    """A waitress server bound to host:port (port 0: a free one, see .effective_port), accepting but not yet
    serving: call .run(). A host name is bound on its first address only."""
    _raise_open_files_limit(settings.WEB_CONNECTION_LIMIT)
    server = _Server(application, adj=Adjustments(host=host, port=port, threads=threads, **adjustments()))
    server.request_deadline = settings.WEB_REQUEST_DEADLINE_SECONDS
    return server


def adjustments() -> dict:
    """waitress's settings, from ours (docs/operations.md "Configuration")."""
    adj = {
        "connection_limit": settings.WEB_CONNECTION_LIMIT,
        "channel_timeout": settings.WEB_CHANNEL_TIMEOUT_SECONDS,
        "cleanup_interval": settings.WEB_CLEANUP_INTERVAL_SECONDS,
        # waitress refuses a Content-Length >= this before reading the body, ingest one > INGEST_MAX_BODY_BYTES
        "max_request_body_size": settings.INGEST_MAX_BODY_BYTES + 1,
        # TRICKY: select() fails on descriptors past 1024, which a thousand connections plus chDB's files reach
        "asyncore_use_poll": True,
        # An OTLP body of 500 spans is ~340 KiB: read in waitress's 8 KiB it took ~40 turns of the Python loop
        # that serves every connection; 256 KiB takes two. A slow client's recv returns what has arrived, no more.
        "recv_bytes": RECV_BYTES,
        "clear_untrusted_proxy_headers": True,
        # Behind TLS, requests are secure (HSTS, secure cookies' checks); waitress strips X-Forwarded-Proto from
        # untrusted peers before Django sees it, so SECURE_PROXY_SSL_HEADER could never match.
        "url_scheme": "https" if settings.SECURE_SSL else "http",
    }
    if settings.WEB_TRUSTED_PROXY:
        # the proxy's X-Forwarded-For becomes REMOTE_ADDR (per-address login limits), -Proto the scheme
        adj.update(trusted_proxy=settings.WEB_TRUSTED_PROXY, trusted_proxy_headers="x-forwarded-for x-forwarded-proto")
    return adj


class _Channel(HTTPChannel):
    """A connection that notes when the request it is reading began to arrive."""

    request_began_at = 0.0

    def received(self, data):
        if self.request is None and data:
            self.request_began_at = time.time()  # waitress's own clock for last_activity
        return super().received(data)


class _Server(TcpWSGIServer):
    channel_class = _Channel
    request_deadline = 120

    def maintenance(self, now):
        """waitress closes idle connections; also close those whose request has been arriving too long."""
        super().maintenance(now)
        cutoff = now - self.request_deadline
        for channel in self.active_channels.values():
            if channel.request is not None and not channel.requests and channel.request_began_at < cutoff:
                channel.will_close = True


def _raise_open_files_limit(connections: int) -> None:
    """Each connection holds a socket and, for a body past 512 KiB, a temp file: raise the soft limit on open
    files (often 1024) towards room for both plus the store's own files, as far as the hard limit allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 2 * connections + 1024
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return
    raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
    if raised < wanted:
        log.warning("open files limited to %d: WEB_CONNECTION_LIMIT=%d wants %d", raised, connections, wanted)
