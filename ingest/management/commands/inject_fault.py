"""Make every writer's ClickHouse inserts fail for a while (the reliability drill of `make chaos`)."""
from django.core.management.base import BaseCommand

from ingest import faults


class Command(BaseCommand):
    help = "Make spool inserts fail as if ClickHouse were down, for N seconds (every process sharing the data dir)."

    def add_arguments(self, parser):
        group = parser.add_mutually_exclusive_group(required=True)
        group.add_argument("--inserts-fail-for", type=float, metavar="SECONDS")
        group.add_argument("--clear", action="store_true", help="end the fault now")

    def handle(self, *args, inserts_fail_for, clear, **options):
        if clear:
            faults.clear()
            self.stdout.write("fault cleared: inserts go through")
            return
        faults.set_inserts_fail(inserts_fail_for)
        self.stdout.write(f"inserts fail for the next {inserts_fail_for:g} s")
