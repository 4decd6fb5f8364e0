from django.core.management.base import BaseCommand, CommandError

from store.errors import ClickHouseError
from store.migrate import SCHEMA_FILE, MigrationError, dump_schema, migrate, pending


class Command(BaseCommand):
    help = "Apply pending ClickHouse schema migrations (idempotent); --check lists them only."

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true", help="list pending migrations; exit 1 if any")
        parser.add_argument("--dump-schema", action="store_true", help=f"after migrating, write {SCHEMA_FILE.name}")

    def handle(self, *args, check=False, **options):
        try:
            if check:
                todo = pending()
                for m in todo:
                    self.stdout.write(f"pending {m.version:04d}_{m.name}")
                if todo:
                    raise CommandError(f"{len(todo)} ClickHouse migration(s) pending")
                self.stdout.write("ClickHouse schema is up to date")
                return
            done = migrate()
        except (MigrationError, ClickHouseError) as exc:
            raise CommandError(str(exc)) from None
        for m in done:
            self.stdout.write(f"applied {m.version:04d}_{m.name}")
        if options["dump_schema"]:
            SCHEMA_FILE.write_text(dump_schema())
            self.stdout.write(f"wrote {SCHEMA_FILE}")
        self.stdout.write(f"ClickHouse schema is up to date ({len(done)} applied)")
