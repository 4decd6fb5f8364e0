"""The latest stored diagnosis per service (written every minute by analysis.jobs)."""
from analysis.models import WindowDiagnosis


def latest_per_service(project, services: list[str]) -> dict[str, WindowDiagnosis]:
    """service -> its most recent WindowDiagnosis (by window end), for those that have one."""
    latest = {}
    for service in services:
        row = (WindowDiagnosis.objects.filter(project=project, service=service)
               .only("service", "start", "end", "verdict", "computed_at").order_by("-end", "-start").first())
        if row is not None:
            latest[service] = row
    return latest
