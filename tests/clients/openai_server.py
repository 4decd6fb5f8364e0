"""A local OpenAI-compatible server (stdlib http.server in a thread, no network) with known timing.

POST /v1/chat/completions and /v1/completions, streaming (SSE) or not:
- streaming: the first chunk (role and first word) `first_ms` after the request, then `chunks` more words
  `gap_ms` apart, the finish_reason right after the last word, a usage chunk when
  `stream_options.include_usage` asks, then `[DONE]`. So first token = first_ms and stream = chunks * gap_ms.
- not streaming: one JSON body with usage after first_ms + chunks * gap_ms (the same generation, unstreamed).
Usage: prompt tokens = words in the prompt, completion tokens = chunks + 1 (one per word).
With `fail=FailOnce(every)`, the first try of some calls is answered 500 at once, so the client's retry policy
(or the gateway's) tries again; `server.tries` lists (call, status) in arrival order, and `server.first_chunk_ms`
each streamed request's time to its first chunk as served.
"""
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "local-gpt"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the openai client's httpx pool expects

    def log_message(self, *args):  # quiet in test output
        pass

    def do_POST(self):
        self.arrived = time.perf_counter()
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        chat = self.path.rstrip("/").endswith("/chat/completions")
        if not chat and not self.path.rstrip("/").endswith("/completions"):
            return self._json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
        if self.server.fail is not None and self.server.fail(body):
            self.server.tries.append((call_name(body), 500))
            return self._json(500, {"error": {"message": "injected failure", "type": "server_error", "code": 500}})
        self.server.tries.append((call_name(body), 200))
        self.server.requests.append(body)
        reply = _Reply(self.server.timing, body, chat)
        if body.get("stream"):
            self._stream(reply, (body.get("stream_options") or {}).get("include_usage", False))
        else:
            time.sleep(self.server.timing.total_s)
            self._json(200, reply.whole())

    def _json(self, status: int, payload: dict):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, reply, include_usage: bool):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        timing = self.server.timing
        time.sleep(timing.first_s)
        for i in range(timing.chunks + 1):
            if i:
                time.sleep(timing.gap_s)
            self._event(reply.chunk(i))
            if not i:
                self.server.first_chunk_ms.append((time.perf_counter() - self.arrived) * 1000)
        self._event(reply.finish())
        if include_usage:
            self._event(reply.usage_chunk())
        self._event("[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _event(self, payload):
        data = f"data: {payload if isinstance(payload, str) else json.dumps(payload)}\n\n".encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


class Timing:
    def __init__(self, first_ms: float = 150, chunks: int = 10, gap_ms: float = 20):
        self.first_s, self.chunks, self.gap_s = first_ms / 1000, chunks, gap_ms / 1000
        self.first_ms, self.gap_ms, self.stream_ms = first_ms, gap_ms, chunks * gap_ms
        self.total_s = self.first_s + chunks * self.gap_s


class _Reply:
    """The chunks and the whole response of one request, in chat or legacy completions shape."""

    def __init__(self, timing: Timing, body: dict, chat: bool):
        self.timing, self.chat, self.created = timing, chat, int(time.time())
        self.id = f"{'chatcmpl' if chat else 'cmpl'}-{time.monotonic_ns()}"
        self.prompt_tokens = prompt_tokens(body)
        self.words = [f"w{i} " for i in range(timing.chunks + 1)]

    def usage(self) -> dict:
        done = len(self.words)
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": done, "total_tokens": self.prompt_tokens + done}

    def _envelope(self, choices: list, **extra) -> dict:
        kind = "chat.completion" if self.chat else "text_completion"
        return {"id": self.id, "object": kind, "created": self.created, "model": MODEL, "choices": choices, **extra}

    def _choice(self, text, finish, delta: bool) -> dict:
        if not self.chat:
            return {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
        key = "delta" if delta else "message"
        content = {"role": "assistant", "content": text} if text is not None or not delta else {}
        return {"index": 0, key: content, "logprobs": None, "finish_reason": finish}

    def chunk(self, i: int) -> dict:
        kind = "chat.completion.chunk" if self.chat else "text_completion"
        return {**self._envelope([self._choice(self.words[i], None, True)]), "object": kind}

    def finish(self) -> dict:
        kind = "chat.completion.chunk" if self.chat else "text_completion"
        return {**self._envelope([self._choice(None if self.chat else "", "stop", True)]), "object": kind}

    def usage_chunk(self) -> dict:
        kind = "chat.completion.chunk" if self.chat else "text_completion"
        return {**self._envelope([], usage=self.usage()), "object": kind}

    def whole(self) -> dict:
        return self._envelope([self._choice("".join(self.words), "stop", False)], usage=self.usage())


def prompt_tokens(body: dict) -> int:
    """The usage.prompt_tokens this server reports for a request body: words of its prompt as JSON."""
    return len(json.dumps(body.get("messages", body.get("prompt"))).split())


def call_name(body: dict) -> str:
    """The text of a request's last message (or its prompt): what names a call, its retries included."""
    messages = body.get("messages") or [{}]
    content = messages[-1].get("content", "") if isinstance(messages[-1], dict) else ""
    if isinstance(content, list):  # content parts
        content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content if messages != [{}] else body.get("prompt", ""))


class FailOnce:
    """Fails the first try of each call whose prompt starts `call N` with N % every == every // 2 (2 in 20 for
    every=10): keyed by the prompt, not by arrival order, so concurrent calls and their retries interleave freely."""

    def __init__(self, every: int = 10):
        self.every, self.failed, self.lock = every, set(), threading.Lock()

    def __call__(self, body: dict) -> bool:
        name = call_name(body)
        number = re.match(r"call (\d+)\b", name)
        if number is None or int(number[1]) % self.every != self.every // 2:
            return False
        with self.lock:
            first = name not in self.failed
            self.failed.add(name)
        return first


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # a gateway opens tens of connections at once

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client closed its idle keep-alive connection
            super().handle_error(request, client_address)


class OpenAIServer:
    """with OpenAIServer(Timing(...)) as server: server.url is the base_url for openai.OpenAI."""

    def __init__(self, timing: Timing | None = None, fail: FailOnce | None = None):
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.timing, self.httpd.requests = timing or Timing(), []
        self.httpd.fail, self.httpd.tries, self.httpd.first_chunk_ms = fail, [], []
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def requests(self) -> list:
        return self.httpd.requests

    @property
    def tries(self) -> list:
        return self.httpd.tries

    @property
    def first_chunk_ms(self) -> list:
        """Per streamed request, ms from its arrival to its first chunk written: the first token as served."""
        return self.httpd.first_chunk_ms

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
