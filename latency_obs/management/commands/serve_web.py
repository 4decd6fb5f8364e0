"""`serve_web`: web UI, API and OTLP/HTTP on the server `up` runs, with the same limits (docker's `web`)."""
import signal

from django.core.management.base import BaseCommand

from ingest.pipeline import stop_writer
from latency_obs.ports import port_error
from latency_obs.web_server import web_server


class Command(BaseCommand):
    help = "Serve the web UI, API and OTLP/HTTP (waitress, limits from settings) until stopped."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="0.0.0.0")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--threads", type=int, default=16, help="web server threads")

    def handle(self, *args, host, port, threads, **options):
        from latency_obs.wsgi import application  # starts this process's spool writer

        try:
            web = web_server(application, host, port, threads)
        except OSError as exc:
            raise port_error("web", host, port, exc, make_run=False) from None
        self.stdout.write(f"web listening on http://{host}:{web.effective_port}/")
        self.stdout.flush()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, _raise_interrupt)
        try:
            web.run()  # waitress stops its threads on KeyboardInterrupt and returns
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second signal must not cut the drain short
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            web.close()
            stop_writer(drain=True)
            self.stdout.write("web stopped")


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt
