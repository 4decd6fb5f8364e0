"""Dashboard pages, one module each; every view takes (request, page) from dashboard.access.page."""
