"""Django's login and logout views, with two changes: a locked-out login answers 429 saying why
(latency_obs/login_throttle.py), and `?next=` redirects only to paths on this site."""
from django.contrib.auth import views as auth_views

from latency_obs.login_throttle import client_address, lockout


class LocalRedirectMixin:
    def get_success_url_allowed_hosts(self):
        # TRICKY: Django allows the request's own Host, and with ALLOWED_HOSTS='*' that is whatever the client
        # sent: Host: evil.example with next=https://evil.example/ passed. No host at all: paths only.
        return set()


class LoginView(LocalRedirectMixin, auth_views.LoginView):
    def form_invalid(self, form):
        username = form.cleaned_data.get("username") or form.data.get("username")
        lock = lockout(username, client_address(self.request))
        if lock is None:
            return super().form_invalid(form)
        # a fresh form: "enter a correct username and password" would be wrong when the password was right
        fresh = self.get_form_class()(self.request, initial={"username": username})
        response = self.render_to_response(self.get_context_data(form=fresh, lockout=lock.message()), status=429)
        response["Retry-After"] = str(lock.seconds_left())
        return response


class LogoutView(LocalRedirectMixin, auth_views.LogoutView):
    pass
