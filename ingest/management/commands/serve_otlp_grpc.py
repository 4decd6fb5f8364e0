import signal
import threading

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from ingest.grpc_server import build_server
from ingest.pipeline import start_writer, stop_writer
from store.client import ClickHouseError


class Command(BaseCommand):
    help = "Serve OTLP/gRPC (TraceService/Export) until stopped; spans go through the durable spool."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="0.0.0.0")
        parser.add_argument("--port", type=int, default=settings.OTLP_GRPC_PORT)

    def handle(self, *args, host, port, **options):
        try:
            server, bound = build_server(host, port)
        except OSError as exc:  # one line naming the port and the flag, as `up` says it (latency_obs/ports.py)
            raise CommandError(f"cannot listen on {host}:{port} for OTLP/gRPC ({exc.strerror or exc}): choose "
                               f"another port with --port <port>") from None
        try:
            start_writer()
        except ClickHouseError as exc:
            raise CommandError(str(exc)) from None
        server.start()
        self.stdout.write(f"OTLP/gRPC listening on {host}:{bound}")
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        while not stop.wait(timeout=1.0):  # wake up regularly: a signal is then handled at once
            pass
        # grpc's stop event has been seen never to fire under load: bound the wait beyond the grace period
        server.stop(grace=5).wait(timeout=10)
        stop_writer(drain=True)
        self.stdout.write("OTLP/gRPC stopped")
