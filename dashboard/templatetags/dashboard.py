from django import template

register = template.Library()


@register.simple_tag
def qs(filters, **changes) -> str:
    """The filters' query string with changes: {% qs f service=s.service %} (a "" value drops the key)."""
    return filters.query(**changes)


@register.filter
def ms(value) -> str:
    """A duration in ms for tables: 1234.5 -> "1,235"; None -> "–"."""
    if value is None:
        return "–"
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:.1f}"
