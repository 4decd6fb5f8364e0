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
