"""The latest stored diagnosis per service (written every minute by analysis.work.jobs)."""
from django.db.models.fields.json import KT

from analysis.models import WindowDiagnosis


def latest_per_service(project, services: list[str]) -> dict[str, WindowDiagnosis]:
    """service -> its most recent WindowDiagnosis (by window end), for those that have one, with `requests`: the
    attempts its own window held, and `runs`: its runs (text, as stored), so a page shows them beside that window,
    not the page's count."""
    latest = {}
    for service in services:
        row = (WindowDiagnosis.objects.filter(project=project, service=service)
               .only("service", "start", "end", "verdict", "computed_at")
               .annotate(requests=KT("result__evidence__requests"), runs=KT("result__evidence__retries__runs")).order_by("-end", "-start").first())
        if row is not None:
            latest[service] = row
    return latest
