"""List the spans ClickHouse refused (quarantined by the spool writer), and replay them after a fix."""
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from ingest import quarantine


class Command(BaseCommand):
    help = "List quarantined spans (`list`) or put them back into the spool for the writer (`replay NAME… | --all`)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        sub.add_parser("list", help="one line per entry: name, spans per project, reason, time, message")
        replay = sub.add_parser("replay", help="move entries back into the spool; a running writer inserts them")
        replay.add_argument("names", nargs="*")
        replay.add_argument("--all", action="store_true")

    def handle(self, *args, action, **options):
        spool_dir = settings.INGEST_SPOOL_DIR
        found = quarantine.entries(spool_dir)
        if action == "list":
            for e in found:
                per_project = ", ".join(f"project {p}: {n}" for p, n in sorted(e.spans.items()))
                self.stdout.write(f"{e.name}  {e.span_count} span(s) [{per_project}]  {e.reason}  {e.at}  {e.message[:200]}")
            self.stdout.write(f"{len(found)} entr{'y' if len(found) == 1 else 'ies'}, "
                              f"{sum(e.span_count for e in found)} span(s) quarantined")
            return
        names = [e.name for e in found] if options["all"] else options["names"]
        if not names:
            raise CommandError("name the entries to replay (see `quarantine list`) or pass --all")
        for name in names:
            try:
                path = quarantine.replay(spool_dir, name)
            except FileNotFoundError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"replaying {name} as {path.name}")
