"""`up`: the whole product in one process (embedded mode).

chDB allows one process per data directory, so web + OTLP/HTTP (waitress), OTLP/gRPC, the spool
writer and Celery's worker and beat all run here as threads. Ctrl-C (or SIGTERM) stops them in
order and drains the spool; a restart keeps the data.
"""
import logging
import os
import signal

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from ingest.grpc_server import build_server
from ingest.pipeline import start_writer, stop_writer
from latency_obs.demo import banner, load_demo
from latency_obs.embedded_celery import EmbeddedCelery
from latency_obs.ports import port_error
from latency_obs.web_server import web_server
from latency_obs.wsgi import application
from store import client, memory
from store.errors import ClickHouseError
from store.migrate import MigrationError, migrate

log = logging.getLogger("latency_obs.up")


class Command(BaseCommand):
    help = "Run web, OTLP/HTTP, OTLP/gRPC, the spool writer and Celery worker+beat in this one process."

    def add_arguments(self, parser):
        parser.add_argument("--demo", action="store_true", help="load demo traffic and print the demo login")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--grpc-port", type=int, default=settings.OTLP_GRPC_PORT, help="0 picks a free port")
        parser.add_argument("--threads", type=int, default=8, help="web server threads")

    def handle(self, *args, demo, host, port, grpc_port, threads, **options):
        if not settings.INGEST_WRITER:
            raise CommandError("up runs the whole product, its spool writer included: unset INGEST_WRITER (off is "
                               "for receivers beside `manage.py serve_writer`)")
        try:
            call_command("migrate", interactive=False, verbosity=0)
            migrate()
        except (MigrationError, ClickHouseError) as exc:
            raise CommandError(str(exc)) from None
        grpc_server, grpc_bound, web = _listen(host, port, grpc_port, threads)
        paged = memory.page_out_library()  # start-up's pages of chDB's library (store/memory.py)
        if paged:
            log.info("chDB's library: %.0f MiB resident after start-up, %.0f MiB after paging it out", *paged)
        start_writer()
        celery = EmbeddedCelery()
        grpc_server.start()
        celery.start()
        url = f"http://{host}:{web.effective_port}/"
        _announce(url)
        self.stdout.write(f"latency_obs is up: {url}  (OTLP/HTTP {url}v1/traces, OTLP/gRPC {host}:{grpc_bound})")
        demo_stop = load_demo(url, f"http://{host}:{grpc_bound}", self.stdout) if demo else None
        if demo:
            self.stdout.write(banner(url, f"http://{host}:{grpc_bound}"))
        self.stdout.flush()
        # TRICKY: set SIGINT too: a process started from a background shell inherits it ignored.
        signal.signal(signal.SIGINT, _raise_interrupt)
        signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            web.run()
        except KeyboardInterrupt:
            pass
        finally:
            # a second Ctrl-C must not cut the drain short
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            self.stdout.write("stopping…")
            if demo_stop is not None:
                demo_stop.set()
            web.close()
            grpc_server.stop(grace=5).wait(timeout=10)  # bounded: see serve_otlp_grpc
            celery.stop()
            stop_writer(drain=True)
            client.close()
            self.stdout.write("stopped")


def _listen(host: str, port: int, grpc_port: int, threads: int):
    """(gRPC server, its port, web server), both bound, neither serving; a port that cannot be bound ends
    start-up with one line saying which and what to change, before any thread has started."""
    try:
        grpc_server, grpc_bound = build_server(host, grpc_port)
    except OSError as exc:
        raise port_error("grpc", host, grpc_port, exc) from None
    try:
        web = web_server(application, host, port, threads)  # the limits of docs/operations.md "Security"
    except OSError as exc:
        grpc_server.stop(None)
        raise port_error("web", host, port, exc) from None
    return grpc_server, grpc_bound, web


def _announce(url: str) -> None:
    """Links printed by commands (and by this process) use the port served here when PUBLIC_BASE_URL is unset:
    settings read settings.UP_URL_FILE, and a command refused while `up` holds the store names this URL."""
    settings.UP_URL_FILE.write_text(url)
    if "PUBLIC_BASE_URL" not in os.environ:
        settings.PUBLIC_BASE_URL = url.rstrip("/")


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt
