"""The demo login and project that `make run` prints, kept in the data dir so reruns print them again."""
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model

from projects.models import ApiKey, Project

DEMO_PROJECT = "demo"
DEMO_USER = "admin"


def _secret_file(name: str):
    return settings.DATA_DIR / name


def ensure_demo_login() -> tuple[str, str, str]:
    """(username, password, ingest+read key) of the demo admin and project, created on first call."""
    password_file, key_file = _secret_file("demo_password"), _secret_file("demo_key")
    User = get_user_model()
    user = User.objects.filter(username=DEMO_USER).first()
    if user is None or not password_file.exists():
        password = secrets.token_urlsafe(12)
        user = user or User(username=DEMO_USER, is_staff=True, is_superuser=True)
        user.set_password(password)
        user.save()
        password_file.write_text(password)
        password_file.chmod(0o600)
    project, _ = Project.objects.get_or_create(name=DEMO_PROJECT)
    project.members.add(user)
    if not key_file.exists() or not ApiKey.objects.filter(project=project, name="make-run", revoked_at=None).exists():
        _, raw = ApiKey.issue(project, ["ingest", "read"], name="make-run")
        key_file.write_text(raw)
        key_file.chmod(0o600)
    return DEMO_USER, password_file.read_text(), key_file.read_text()


def banner(url: str, grpc_url: str) -> str:
    """The login, the key and a complete exporter set-up per protocol, to paste before a command run under
    `opentelemetry-instrument` (or any SDK reading OTEL_* variables). The protocol is spelled out: SDKs default
    to gRPC, which fails every export against the HTTP port. url: "http://host:port/"; grpc_url: "http://host:port"."""
    user, password, key = ensure_demo_login()
    auth = f"OTEL_EXPORTER_OTLP_TRACES_HEADERS=Authorization=Bearer%20{key}"
    return (
        f"\n  Open {url}  and log in as {user} / {password}\n"
        f"  Demo project '{DEMO_PROJECT}' ingest+read key: {key}\n"
        f"  Send traces over OTLP/HTTP:\n"
        f"    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf "
        f"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT={url}v1/traces {auth}\n"
        f"  or over OTLP/gRPC:\n"
        f"    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc OTEL_EXPORTER_OTLP_TRACES_ENDPOINT={grpc_url} {auth}\n"
    )


def load_demo(url: str, grpc_url: str, out):
    """Start the demo traffic into the demo project (background threads); returns the stop event. The login, the
    key and the exporter set-ups are printed again once the hour is loaded: by then they have scrolled away."""
    from simulator import demo

    _, _, key = ensure_demo_login()
    out.write("demo: sending an hour of simulated traffic to project 'demo', then a live trickle…")
    return demo.start(f"{url}v1/traces", key, out, ready=lambda: out.write("demo: ready." + banner(url, grpc_url)))
