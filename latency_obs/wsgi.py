import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "latency_obs.settings")
application = get_wsgi_application()

# Start this process's spool writer now, so segments left by a crash are sent without waiting for traffic.
from ingest.pipeline import start_writer  # noqa: E402

start_writer()
