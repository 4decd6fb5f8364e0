"""A real HTTP server on 127.0.0.1 that records webhook requests and answers from a script."""
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    """script: answers in order (status, headers, delay_s); after it runs out, 200."""

    def __init__(self):
        self.requests: list[dict] = []
        self.script: list[tuple[int, dict, float]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status, headers, delay = receiver.script.pop(0) if receiver.script else (200, {}, 0)
                time.sleep(delay)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def answer(self, *answers) -> None:
        """answer(503, (429, {"Retry-After": "1"}), (200, {}, 0.5), ...)"""
        for a in answers:
            a = a if isinstance(a, tuple) else (a,)
            self.script.append((a[0], a[1] if len(a) > 1 else {}, a[2] if len(a) > 2 else 0))
