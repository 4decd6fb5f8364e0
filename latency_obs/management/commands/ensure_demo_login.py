from django.core.management.base import BaseCommand

from latency_obs.demo import ensure_demo_login


class Command(BaseCommand):
    help = "Create (once) the demo admin login and demo project key that `make run` prints."

    def handle(self, *args, **options):
        user, _, _ = ensure_demo_login()
        self.stdout.write(f"demo login '{user}' and project key ready (printed by `up --demo`)")
