"""`serve_writer`: the spool writer as its own process, beside receivers run with INGEST_WRITER=off.

It drains the spool directory it shares with them (traces, metrics, logs) into ClickHouse until SIGTERM or
SIGINT, then inserts what is left and exits. Several may share one spool: segments are flock'ed, so each
batch is inserted by one of them (docs/operations.md, "The receive tier").
"""
import signal
import threading

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from ingest.pipeline import get_writer, start_writer, stop_writer
from store import client
from store.errors import ClickHouseError


class Command(BaseCommand):
    help = "Insert the spool's segments into ClickHouse until stopped (SIGTERM drains the spool first)."

    def add_arguments(self, parser):
        parser.add_argument("--report-seconds", type=float, default=0,
                            help="print the spool's backlog every this many seconds (0: never)")

    def handle(self, *args, report_seconds, **options):
        if not settings.INGEST_WRITER:
            raise CommandError("INGEST_WRITER=off is for receivers; serve_writer is the process that inserts: "
                               "unset it here")
        try:
            client.get_client("writer")  # fail at start, not at the first batch: unreachable, or chDB held
        except ClickHouseError as exc:
            raise CommandError(str(exc)) from None
        start_writer()
        self.stdout.write(f"spool writer draining {settings.INGEST_SPOOL_DIR} into ClickHouse")
        self.stdout.flush()
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        while not stop.wait(timeout=report_seconds or 1.0):  # wake up regularly: a signal is then handled at once
            if report_seconds:
                segments, size = get_writer().spool.backlog()
                self.stdout.write(f"spool: {segments} segments, {size} bytes; error: {get_writer().last_error or '-'}")
                self.stdout.flush()
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second signal must not cut the drain short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stop_writer(drain=True)
        client.close()
        self.stdout.write("spool writer stopped")
