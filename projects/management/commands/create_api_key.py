from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_slug
from django.db import transaction

from projects.models import ApiKey, Project


class Command(BaseCommand):
    help = "Create an API key for a project (creating the project if needed) and print it once."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project name (a slug)")
        parser.add_argument("--scope", default="ingest", help="comma-separated: ingest,read (default ingest)")
        parser.add_argument("--name", default="", help="a label for the key")

    def handle(self, *args, project, scope, name, **options):
        try:
            validate_slug(project)
        except ValidationError:
            raise CommandError(f"--project must be a slug (letters, digits, - and _), got {project!r}") from None
        try:
            # one transaction: a refused scope must not leave a new, keyless project behind
            with transaction.atomic():
                proj, created = Project.objects.get_or_create(name=project)
                _, raw = ApiKey.issue(proj, [s.strip() for s in scope.split(",") if s.strip()], name=name)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if created:
            self.stderr.write(f"created project {proj.name}")
        self.stderr.write("API key (shown once; send it as 'Authorization: Bearer <key>'):")
        self.stdout.write(raw)
