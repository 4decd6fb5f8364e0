"""A local serving engine for the two-layer test (tests/clients/test_layers_propagated.py): the streaming OpenAI-compatible
server of openai_server.py, which continues the caller's trace from its `traceparent` header (the OTel SDK's own
propagator, opentelemetry.propagate.extract) and emits what vLLM's --otlp-traces-endpoint emits for each request: a
SERVER span `llm_request` with gen_ai.latency.* (docs/sending-traces.md, vLLM). Before a streamed request starts to
prefill it waits `queue_ms` (its time in the queue); then the Timing of openai_server.py.

And LatencyPipe: a TCP proxy that delays every byte by a fixed time in each direction, as a long network path does,
so the layers' gap is a real network delay on real sockets, not a sleep inside either layer.
"""
import queue
import socket
import threading
import time

from opentelemetry import propagate
from opentelemetry.trace import SpanKind

from tests.clients.openai_server import OpenAIServer, Timing, _Handler, _Reply


class _EngineHandler(_Handler):
    def _stream(self, reply: _Reply, include_usage: bool):
        """Stream as openai_server does, inside vLLM's span: queued at arrival, admitted after queue_ms."""
        server, timing = self.server, self.server.timing
        parent = propagate.extract({k.lower(): v for k, v in self.headers.items()})
        arrived_ns = time.time_ns() - int((time.perf_counter() - self.arrived) * 1e9)
        span = server.tracer.start_span("llm_request", context=parent, kind=SpanKind.SERVER, start_time=arrived_ns)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        time.sleep(server.queue_s)
        admitted = time.perf_counter()
        time.sleep(timing.first_s)
        for i in range(timing.chunks + 1):
            if i:
                time.sleep(timing.gap_s)
            self._event(reply.chunk(i))
            if not i:
                first = time.perf_counter()
        last = time.perf_counter()
        self._event(reply.finish())
        if include_usage:
            self._event(reply.usage_chunk())
        self._event("[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        released = time.perf_counter()
        since = lambda at: at - self.arrived  # noqa: E731  seconds from arrival, as vLLM's gen_ai.latency.* are
        span.set_attributes({
            "gen_ai.latency.time_in_queue": since(admitted), "gen_ai.latency.time_to_first_token": since(first),
            "gen_ai.latency.e2e": since(last), "gen_ai.latency.time_in_model_prefill": first - admitted,
            "gen_ai.latency.time_in_model_decode": last - first, "gen_ai.latency.time_in_model_inference": last - admitted,
            "gen_ai.usage.prompt_tokens": reply.prompt_tokens, "gen_ai.usage.completion_tokens": len(reply.words),
            "gen_ai.request.id": reply.id, "gen_ai.request.model": "local-gpt", "gen_ai.request.max_tokens": 256,
        })
        span.end(end_time=arrived_ns + int(since(released) * 1e9))
        server.served.append({"queue_ms": since(admitted) * 1000, "ttft_ms": since(first) * 1000,
                              "total_ms": since(released) * 1000})


class EngineServer(OpenAIServer):
    """with EngineServer(tracer, Timing(...), queue_ms=100) as engine: engine.url for openai.OpenAI; engine.served
    lists per streamed request {"queue_ms", "ttft_ms", "total_ms"} as the engine measured them."""

    def __init__(self, tracer, timing: Timing | None = None, queue_ms: float = 0.0):
        super().__init__(timing)
        self.httpd.RequestHandlerClass = _EngineHandler
        self.httpd.tracer, self.httpd.queue_s, self.httpd.served = tracer, queue_ms / 1000, []

    @property
    def served(self) -> list:
        return self.httpd.served


class LatencyPipe:
    """with LatencyPipe(upstream_port, out_ms=200, back_ms=200) as pipe: connect to pipe.port instead. Every chunk
    read from one side is written to the other out_ms (client -> upstream) or back_ms (upstream -> client) after it
    was read, in order: a constant-latency path, as a cross-region hop is."""

    def __init__(self, upstream_port: int, out_ms: float, back_ms: float):
        self.upstream, self.out_s, self.back_s = upstream_port, out_ms / 1000, back_ms / 1000
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self._stop = threading.Event()

    def __enter__(self):
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self.listener.close()

    def _accept(self):
        while not self._stop.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream))
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._pump(client, upstream, self.out_s)
            self._pump(upstream, client, self.back_s)

    def _pump(self, source: socket.socket, sink: socket.socket, delay_s: float):
        due: queue.Queue = queue.Queue()

        def read():
            while True:
                try:
                    data = source.recv(65536)
                except OSError:
                    data = b""
                due.put((time.perf_counter() + delay_s, data))
                if not data:
                    return

        def write():
            while True:
                at, data = due.get()
                wait = at - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
                try:
                    if not data:
                        sink.shutdown(socket.SHUT_WR)
                        return
                    sink.sendall(data)
                except OSError:
                    return

        threading.Thread(target=read, daemon=True).start()
        threading.Thread(target=write, daemon=True).start()
