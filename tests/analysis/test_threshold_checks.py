"""The system check on ANALYSIS_THRESHOLDS: unknown names (analysis.E001) and bad values (analysis.E002) stop
`manage.py check` and `up` before anything starts, with a message naming the threshold."""
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from analysis.diagnosis.thresholds import check_settings, configured
from latency_obs.management.commands.up import Command as Up


def ids(settings, overrides) -> list[tuple[str, str]]:
    settings.ANALYSIS_THRESHOLDS = overrides
    return [(e.id, e.msg) for e in check_settings()]


def test_no_overrides_and_good_ones_pass(settings):
    assert ids(settings, {}) == []
    # a whole number for a float threshold, a float for a count that is whole, the edges of each range
    assert ids(settings, {"queue_p95_ms": 2000, "prefill_min_count": 5.0, "gap_fraction": 1,
                          "churn_spearman": -1, "retry_rate": 0}) == []


def test_unknown_names_are_analysis_e001_in_one_message(settings):
    assert ids(settings, {"queue_p95": 1, "bogus": 2, "ttft_p95_ms": 500}) == [
        ("analysis.E001", "ANALYSIS_THRESHOLDS has unknown names: bogus, queue_p95")]


@pytest.mark.parametrize("name, value, says", [
    ("queue_p95_ms", "2000", "must be a number, got '2000'"),
    ("queue_p95_ms", True, "must be a number, got True"),
    ("queue_p95_ms", None, "must be a number, got None"),
    ("queue_p95_ms", float("nan"), "must be a finite number"),
    ("queue_p95_ms", 10**400, "must be a finite number"),  # JSON allows an integer of any length
    ("queue_p95_ms", -1, "must be 0 or more, got -1"),
    ("gap_fraction", 1.5, "must be between 0 and 1, got 1.5"),
    ("churn_spearman", -2, "must be between -1 and 1, got -2"),
    ("tenant_min_count", 2.5, "must be a whole number, got 2.5"),
])
def test_bad_values_are_analysis_e002_naming_the_threshold(settings, name, value, says):
    [(check_id, message)] = ids(settings, {name: value})
    assert check_id == "analysis.E002" and message.startswith(f"ANALYSIS_THRESHOLDS {name} {says}")


def test_manage_py_check_fails_with_the_ids(settings):
    settings.ANALYSIS_THRESHOLDS = {"bogus": 1, "gap_fraction": 2}
    with pytest.raises(SystemCheckError, match=r"(?s)analysis\.E001.*bogus.*analysis\.E002.*gap_fraction"):
        call_command("check")


def test_up_refuses_to_start(settings, monkeypatch):
    settings.ANALYSIS_THRESHOLDS = {"bogus": 1}

    def started(*args, **kwargs):
        raise AssertionError("up started despite the bad thresholds")

    monkeypatch.setattr(Up, "handle", started)
    with pytest.raises(SystemCheckError, match="analysis.E001"):
        call_command("up", skip_checks=False)  # as from a shell: call_command skips checks unless told


def test_configured_refuses_what_the_check_refuses(settings):
    settings.ANALYSIS_THRESHOLDS = {"gap_fraction": 2}
    with pytest.raises(ImproperlyConfigured, match="gap_fraction must be between 0 and 1"):
        configured()
    settings.ANALYSIS_THRESHOLDS = {"prefill_min_count": 5.0, "queue_p95_ms": 2000}
    thresholds = configured()
    assert (thresholds.prefill_min_count, thresholds.queue_p95_ms) == (5, 2000.0)
    assert isinstance(thresholds.prefill_min_count, int)
