"""Reading dashboard pages in tests: the chart specs a page embeds, by their json_script id."""
import json
import re
from html.parser import HTMLParser

from tests import factories as f

SECOND = 1000 * f.MS


def chart(response, chart_id: str) -> dict:
    """The Plotly spec embedded as <script id="chart_id" type="application/json">."""
    return spec(response.content.decode(), chart_id)


def trace(spec: dict, name: str) -> dict:
    return next(t for t in spec["data"] if t["name"] == name)


class Table(HTMLParser):
    """<table id=...>: header texts, their data-sort, and per row the cells' (data-value, text)."""

    def __init__(self, table_id):
        super().__init__()
        self.id, self.inside, self.cell = table_id, False, None
        self.headers, self.sorts, self.rows, self.table_class = [], [], [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table" and attrs.get("id") == self.id:
            self.inside, self.table_class = True, attrs.get("class")
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag in ("th", "td"):
            self.cell = [tag, attrs.get("data-value"), "", attrs.get("data-sort")]

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[2] += data

    def handle_endtag(self, tag):
        if tag == "table":
            self.inside = False
        elif self.inside and tag in ("th", "td") and self.cell is not None:
            kind, value, text, sort = self.cell
            if kind == "th":
                self.headers.append(" ".join(text.split()))
                self.sorts.append(sort)
            else:
                self.rows[-1].append((value, " ".join(text.split())))
            self.cell = None


def table(html: str, table_id: str) -> Table:
    parsed = Table(table_id)
    parsed.feed(html)
    parsed.rows = [r for r in parsed.rows if r]
    return parsed


def by_header(parsed: Table) -> list[dict]:
    """Rows as {header: data-value (or the text when the cell has none)}."""
    return [{h: (v if v is not None else t) for h, (v, t) in zip(parsed.headers, row)} for row in parsed.rows]


def spec(html: str, chart_id: str) -> dict:
    match = re.search(rf'<script id="{chart_id}" type="application/json">(.*?)</script>', html, re.S)
    assert match, f"no chart {chart_id}"
    return json.loads(match.group(1))


def at(seconds: float, **kwargs):
    return f.attempt(start_ns=f.BASE_NS + int(seconds * SECOND), **kwargs)


def text_of(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}"[^>]*>(.*?)<', html, re.S)
    assert found, f"no element {element_id}"
    return found.group(1).strip()
