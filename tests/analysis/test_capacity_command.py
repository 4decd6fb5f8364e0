"""manage.py capacity: the API's document as JSON, the worksheet as CSV or readable text; errors as CommandError, and
a pointer to the running product's API when `up` holds the embedded store."""
import csv
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from analysis.capacity import document
from store.errors import ClickHouseError
from tests.analysis import capacity_spans as spans

WINDOW = ["--start", spans.WINDOW["start"], "--end", spans.WINDOW["end"]]


@pytest.fixture
def sent(alpha, ingest):
    project, key = alpha
    spans.store(project, key, ingest)
    return project


def run(*args) -> str:
    out = StringIO()
    call_command("capacity", *args, stdout=out)
    return out.getvalue()


def test_json_is_the_api_document(sent):
    body = json.loads(run("--project", "alpha", "--service", spans.SERVICE, *WINDOW, "--format", "json"))
    assert body == document(sent.pk, spans.SERVICE, spans.START, spans.END)


def test_csv_has_the_service_and_a_row_per_region(sent):
    rows = list(csv.reader(StringIO(run("--service", spans.SERVICE, *WINDOW, "--format", "csv"))))
    header = rows[0]
    assert header[:4] == ["scope", "runs", "attempts", "peak_rps"] and "cost_per_1k_requests_usd" in header
    by_scope = {row[0]: dict(zip(header, row)) for row in rows[1:]}
    assert set(by_scope) == {"all", "us-east-1", "eu-west-1"}
    assert by_scope["all"]["runs"] == "11" and float(by_scope["all"]["peak_rps"]) == pytest.approx(0.1)
    assert by_scope["all"]["cost_per_1k_requests_usd"] == ""  # unknown: empty, never 0


@override_settings(GPU_HOUR_PRICE_USD=2.5)
def test_text_reads_like_the_pages(sent):
    text = run("--service", spans.SERVICE, *WINDOW)
    assert text.startswith(f"{spans.SERVICE}: capacity 2026-01-05T10:00:00Z – 2026-01-05T10:10:00Z (requests are "
                           f"runs: 11 runs, 11 attempts)")
    assert "  peak                0.1 requests/s at 10:00 UTC\n" in text
    assert "  instances           2\n" in text and "us-east-1: peak 0.1 requests/s" in text
    # 2.5 USD x 0.0649 GPU-hours (test_capacity.py works them out) / 11 runs x 1000 = 14.75
    assert "  cost / 1k requests  $14.8\n" in text
    assert "objective: TTFT p95 under 600 ms (diagnosis threshold 'ttft_p95_ms')" in text
    assert "not measured" not in text.split("regions:")[0]  # every field of the service known


def test_bad_input_is_a_clear_error(sent, beta):
    with pytest.raises(CommandError, match="name the project with --project"):
        run("--service", spans.SERVICE, *WINDOW)
    with pytest.raises(CommandError, match="unknown_service"):
        run("--project", "alpha", "--service", "nope", *WINDOW)
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("capacity", "--project", "alpha", "--service", spans.SERVICE, "--start", "soon", "--format",
                     "json", stdout=out)
    assert json.loads(out.getvalue())["error"] == "bad_date"


@override_settings(PUBLIC_BASE_URL="http://127.0.0.1:8000")
def test_a_held_store_points_at_the_running_api(sent, monkeypatch):
    """`up` holds the embedded store (chDB allows one process per data dir): the command says where to ask."""
    def held(*args, **kwargs):
        raise ClickHouseError("store_busy", "The embedded ClickHouse store at /x is held by process 42.")

    monkeypatch.setattr("analysis.capacity.checked", held)
    with pytest.raises(CommandError) as refused:
        run("--service", spans.SERVICE, *WINDOW)
    assert "held by process 42" in str(refused.value)
    assert ("http://127.0.0.1:8000/api/v1/capacity?service=cap-svc&start=2026-01-05T10%3A00%3A00Z"
            in str(refused.value))
