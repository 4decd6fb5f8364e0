"""Serves plotly.js from the plotly Python package's own copy (no CDN, works offline, one pinned version)."""
from pathlib import Path

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

PLOTLY_JS = "vendor/plotly.min.js"
_SOURCE = Path(plotly.__file__).parent / "package_data"


class _Storage(FileSystemStorage):
    prefix = "vendor"


class PlotlyFinder(BaseFinder):
    storage = _Storage(location=str(_SOURCE))

    def check(self, **kwargs):
        return []

    def find(self, path, find_all=False, **kwargs):
        if path != PLOTLY_JS:
            return [] if find_all else None
        found = str(_SOURCE / "plotly.min.js")
        return [found] if find_all else found

    def list(self, ignore_patterns):
        yield "plotly.min.js", self.storage
