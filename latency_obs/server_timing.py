"""A Server-Timing header on every answer: how long the request spent in Django, and the thread's CPU in that time.

    Server-Timing: app;dur=412.3, cpu;dur=38.1

`app` is the wall time from the outermost middleware to the response (ms), what `make bench-live` reports as a
page's server time; `cpu` is the CPU the request's own thread used meanwhile (time.thread_time). A gap between the
two is time spent waiting: for ClickHouse (its own threads do the work), for a client another thread holds, or for
the GIL. Not included: the wait for a web server thread and the write of the body (waitress does both outside the
application). The figures say nothing about the data, so every answer gets them, as browsers' devtools show them.
"""
import time


class ServerTimingMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        began, cpu = time.perf_counter(), time.thread_time()
        response = self.get_response(request)
        took_ms, cpu_ms = (time.perf_counter() - began) * 1000, (time.thread_time() - cpu) * 1000
        response["Server-Timing"] = f"app;dur={took_ms:.1f}, cpu;dur={cpu_ms:.1f}"
        return response
