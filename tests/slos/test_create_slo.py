"""manage.py create_slo: stores exactly the promise given and prints it; bad input is a CommandError naming the
option, and nothing is stored."""
import io

import pytest
from django.core.management import CommandError, call_command

from slos.models import Slo

ARGS = ["--project", "alpha", "--service", "chat-gateway", "--signal", "ttft", "--threshold-ms", "1000",
        "--objective", "0.99"]


def run(*args) -> str:
    out = io.StringIO()
    call_command("create_slo", *args, stdout=out)
    return out.getvalue()


def test_creates_the_slo_and_prints_it(alpha):
    text = run(*ARGS, "--window-days", "30", "--route", "/v1/chat", "--tenant", "acme")
    slo = Slo.objects.get()
    assert text == f"SLO {slo.pk}: chat-gateway /v1/chat tenant=acme: 99% TTFT < 1 s (30 days)\n"
    assert (slo.project, slo.service, slo.route, slo.tenant, slo.signal, slo.threshold_ms, slo.objective,
            slo.window_days) == (alpha[0], "chat-gateway", "/v1/chat", "acme", "ttft", 1000.0, 0.99, 30)


def test_the_window_defaults_to_28_days_and_total_is_a_signal(alpha):
    run("--project", "alpha", "--service", "s", "--signal", "total", "--threshold-ms", "4000", "--objective", "0.95")
    assert Slo.objects.values_list("signal", "window_days").get() == ("total", 28)


@pytest.mark.parametrize("args, message", [
    (["--objective", "1"], "--objective: Ensure this value is less than or equal to 0.99999."),
    (["--threshold-ms", "-5"], "--threshold-ms: Ensure this value is greater than or equal to 0.001."),
    (["--project", "nope"], "no project named 'nope'"),
])
def test_bad_values_name_the_option(alpha, args, message):
    with pytest.raises(CommandError, match=message):
        run(*ARGS, *args)
    assert not Slo.objects.exists()


@pytest.mark.parametrize("args", [["--signal", "t_queue"], ["--window-days", "14"]])
def test_choices_are_checked_by_the_parser(alpha, args):
    with pytest.raises(CommandError, match="invalid choice"):
        run(*ARGS, *args)


def test_the_same_promise_twice_is_refused(alpha):
    run(*ARGS)
    with pytest.raises(CommandError, match="already exists"):
        run(*ARGS)
    assert Slo.objects.count() == 1
