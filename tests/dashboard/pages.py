"""Reading dashboard pages in tests: the chart specs a page embeds, by their json_script id."""
import json
import re


def chart(response, chart_id: str) -> dict:
    """The Plotly spec embedded as <script id="chart_id" type="application/json">."""
    html = response.content.decode()
    match = re.search(rf'<script id="{re.escape(chart_id)}" type="application/json">(.*?)</script>', html, re.S)
    assert match, f"no chart {chart_id!r} in the page"
    return json.loads(match.group(1))


def trace(spec: dict, name: str) -> dict:
    return next(t for t in spec["data"] if t["name"] == name)
