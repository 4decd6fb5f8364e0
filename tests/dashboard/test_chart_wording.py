"""Chart hover labels read like the rest of the product: units, no scientific notation, "not measured"."""
from datetime import datetime, timezone

from dashboard import charts


def test_percentile_hover_shows_durations_in_their_unit():
    at = datetime(2026, 1, 5, 10, tzinfo=timezone.utc)
    points = [{"at": at, "ttft": {"p50": 25692.644, "p95": 640.2, "p99": None}}]
    spec = charts.percentile_lines(points, "ttft", "TTFT")
    assert [t["customdata"] for t in spec["data"]] == [["25.7 s"], ["640 ms"], ["not measured"]]
    assert all("%{customdata}" in t["hovertemplate"] for t in spec["data"])


def test_stacked_bucket_hover_shows_durations_in_their_unit():
    buckets = {b: {"p95": 1.5e6 if b == "t_queue" else 12.0} for b in charts.STAGES}
    spec = charts.stacked_buckets([{"label": "/v1/chat", "buckets": buckets}], "p95", "by route")
    hover = {t["name"]: t["customdata"] for t in spec["data"]}
    assert hover["t_queue"] == ["25 min"] and hover["t_post"] == ["12 ms"]


def test_durations_read_in_the_largest_sensible_unit():
    from analysis.wording import duration
    # 1502.3 s of backlog is 25 minutes; 2.4 h of it is hours, not 144 min
    # seconds in three significant digits: a rounded value keeps its zeros, an exact one (a threshold) drops them
    assert (duration(1502.3 * 1000), duration(2.4 * 3_600_000), duration(45995.97), duration(119_000)) == (
        "25 min", "2.4 h", "46.0 s", "119 s")
    assert (duration(999.7), duration(1000), duration(2500), duration(9999)) == ("1.00 s", "1 s", "2.5 s", "10.0 s")


def test_one_ratio_style_and_signed_changes():
    from analysis.wording import fmt
    assert [fmt(v, "x") for v in (1.1149, 3.1875, 14.66, 825, 1090.2)] == ["×1.11", "×3.19", "×14.7", "×825", "×1,090"]
    assert (fmt(0.5, "+%"), fmt(-0.12, "+%"), fmt(0.0, "+%")) == ("+50%", "−12%", "±0%")


def test_error_rate_ticks_are_even_round_steps():
    from dashboard.charts import even_ticks
    assert even_ticks(1.33) == {"tickmode": "linear", "tick0": 0, "dtick": 0.5, "range": [0, 1.5]}
    assert even_ticks(37)["dtick"] == 10 and even_ticks(0)["range"][1] > 0
