from django import template

from analysis import wording

register = template.Library()


@register.simple_tag
def qs(filters, **changes) -> str:
    """The filters' query string with changes: {% qs f service=s.service %} (a "" value drops the key)."""
    return filters.query(**changes)


@register.filter
def fmt(value, unit: str = "") -> str:
    """A number as users read it, with its unit (analysis.wording.fmt): {{ x|fmt:"ms" }} -> "25.7 s",
    {{ share|fmt:"%" }} -> "41%"; None -> "not measured"."""
    return wording.fmt(value, unit)


@register.filter
def ms(value) -> str:
    """A duration in ms for tables: 1234.5 -> "1,235"; None -> "–"."""
    if value is None:
        return "–"
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:.1f}"


@register.filter
def short_id(value, length: int = 24) -> str:
    """A long id by its distinguishing end: run ids share their prefix ("run-78724300-chat-gateway-…"), so
    "…-gateway-000412" tells ten runs apart where a cut-off start would not (the full id goes in a title)."""
    text = str(value)
    return text if len(text) <= length else "…" + text[-(length - 1):]


@register.filter
def seconds(value) -> str:
    """A duration in seconds as users read it (analysis.wording.duration): 1502.3 -> "25.0 min"; None -> "–"."""
    return "–" if value is None else wording.duration(value * 1000)


@register.filter
def minutes(value) -> str:
    """A length in minutes as users read it (analysis.wording.duration): 42.4 -> "42.4 min", 180 -> "3.0 h"."""
    return "–" if value is None else wording.duration(value * 60_000)


@register.simple_tag
def memory(used_bytes, total_bytes) -> str:
    """{% memory used total %} -> "72 of 80 GiB" (analysis.wording.memory)."""
    return wording.memory(used_bytes, total_bytes)
