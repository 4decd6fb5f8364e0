"""Security headers on every answer: Content-Security-Policy, nosniff, Referrer-Policy, X-Frame-Options.

Django 5.2 has no Content-Security-Policy of its own (6.0 adds one), hence this middleware. The policy allows
script only from our own files (plotly.js and dashboard.js; the charts' data is JSON in json_script blocks,
which are not run), so a span attribute that slips past escaping still cannot run as script. style-src allows
inline styles: plotly.js injects <style> elements (Chromium blocks its charts' styling without this, even with
style-src-attr allowed; tests/browser), and CSS cannot run script. The weekly review's offline file inlines
its script; it is sent as an attachment (dashboard/views/reviews.py), which a browser saves rather than shows, so it
gets the same policy here and runs once opened from disk, where no policy applies.

Django's SecurityMiddleware and XFrameOptionsMiddleware set the other three too, but from inside
JsonErrorsMiddleware, which replaces error answers on the API: this one is outermost and fills in what is
missing, with the same settings. HSTS stays with SecurityMiddleware (secure requests only, SECURE_SSL).
"""
from django.conf import settings

CONTENT_SECURITY_POLICY = "; ".join((
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "object-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'self'",
    "form-action 'self'",
))


class SecurityHeadersMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        # setdefault: an answer that brings its own policy keeps it
        response.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response.setdefault("X-Content-Type-Options", "nosniff")
        response.setdefault("Referrer-Policy", settings.SECURE_REFERRER_POLICY)
        response.setdefault("X-Frame-Options", settings.X_FRAME_OPTIONS)
        return response
