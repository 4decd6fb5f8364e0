"""Numbers as users read them: units, no scientific notation, "not measured" for the unknown.

One formatter for the API's sentences, the dashboard and the alert messages, so a value reads the same
everywhere. Units: "ms" (durations: ms below a second, then s, then min), "%" (a share 0..1), "+%" (a signed relative change), "x" (a ratio),
"ms/token", "per run", "per success", "corr" (a rank correlation), "nines" (a share near 1 to 0.001 %: "99.95%"),
"" (a plain number).
"""
import math

NOT_MEASURED = "not measured"


def fmt(value, unit: str = "") -> str:
    """One value with its unit: fmt(25692.644, "ms") -> "25.7 s", fmt(0.4123, "%") -> "41%",
    fmt(800, "x") -> "×800", fmt(None, "ms") -> "not measured"."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return NOT_MEASURED
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if unit == "ms":
        return duration(value)
    if unit == "+%":  # a relative change, signed: "+50%", "−12%"
        return ("+" if value > 0 else "−" if value < 0 else "±") + fmt(abs(value), "%")
    if unit == "nines":  # a share near 1 (an SLO's objective, its compliance): truncated, never rounded up to 100%
        return f"{_number(math.floor(value * 100_000 + 1e-6) / 1000, 3)}%"
    if unit == "%":
        pct = value * 100
        return f"{_number(pct, 1 if abs(pct) < 10 and pct != int(pct) else 0)}%"
    if unit == "x":  # one ratio style everywhere: the sign first, three significant digits ("×14.7", "×1.35")
        return f"×{_number(value, 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0)}"
    if unit == "corr":
        return f"{value:.2f}"
    number = _number(value, 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0)
    return f"{number} {unit}" if unit else number


def duration(ms: float) -> str:
    """Milliseconds as ms, s, min or h: 0.4 ms, 37 ms, 1.25 s, 46.0 s, 3.5 min from 120 s, 2.4 h from 2 h."""
    size = abs(ms)
    if size < 10:
        return f"{_number(ms, 1)} ms"
    if size < 999.5:  # 999.7 ms would print as "1000 ms"
        return f"{ms:.0f} ms"
    if size < 120_000:
        return f"{_seconds(ms / 1000, 2 if size < 9_995 else 1 if size < 99_950 else 0)} s"
    if size < 7_200_000:
        return f"{_number(ms / 60_000, 1)} min"
    return f"{_number(ms / 3_600_000, 1)} h"


def memory(used_bytes, total_bytes) -> str:
    """GPU memory as users read it: "72 of 80 GiB"; "not measured" without both."""
    if used_bytes is None or not total_bytes:
        return NOT_MEASURED
    gib = 2 ** 30
    decimals = 1 if total_bytes < 10 * gib else 0
    return f"{_number(used_bytes / gib, decimals)} of {_number(total_bytes / gib, decimals)} GiB"


def ratio(value, baseline) -> str:
    """How many times the baseline a value is ("×800", "×1.3"); "new" when the baseline was 0; "" when unknown."""
    if value is None or baseline is None:
        return ""
    if baseline <= 0:
        return "new" if value > 0 else "×1"
    return fmt(value / baseline, "x")


def _seconds(value: float, decimals: int) -> str:
    """Three significant digits: a rounded value keeps its trailing zeros (45.996 -> "46.0": measured, to 0.1 s),
    an exact one drops them (a 1 s threshold reads "1", 2.5 s "2.5")."""
    text = f"{value:,.{decimals}f}"
    exact = abs(float(text.replace(",", "")) - value) < 1e-9
    return _number(value, decimals) if exact else text


def _number(value: float, decimals: int) -> str:
    """Fixed point with thousands separators, trailing zeros dropped; never scientific notation."""
    text = f"{value:,.{decimals}f}"
    if decimals:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text
