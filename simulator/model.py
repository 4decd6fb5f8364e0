"""A discrete-event model of an LLM request path (seeds 000, 002, 003), on a simulated clock.

client (retries, back-off, timeouts) -> gateway instance: admission queue + concurrency cap, a
scheduler that can stall -> connection to the engine (reused, or a new `connect` with a cold
start) -> preprocessing (tokenize, prompt_build, policy) on a small CPU pool -> network hop ->
engine (prefill slowed by long contexts in flight, decode slowed by batch load) -> post.

`simulate()` yields finished runs in order of completion; times are ms from the start.

Two layers (`layers=True`, docs/simulator.md "Two layers"): the request path is a gateway in front of the engine,
in one trace. The run is the gateway's server span: its own time (`gateway_ms`: auth, quota, routing, split 70/30
before its first call and after its last) and its calls, one per attempt; each call crosses the network
(`network_ms`, half on the way out, half on the way back) to the engine, whose instance queue, cap, prefill and
decode are the model above. The network hop inside the attempt is then the one between the layers, so the
`network_overhead` overlay slows that hop. The layers draw from a random stream of their own.
Deterministic for a given seed. Incidents (simulator.incidents) switch a cause's overlay on for part of the
run: every knob is read through `_s(run, instance)`, which is the scenario itself when no incident is on, so
a run without incidents draws exactly the random numbers it always did.
"""
import heapq
import itertools
import math
import random
from collections import deque
from dataclasses import dataclass, field

from simulator.incidents import Active
from simulator.scenarios import Scenario

LONG_PROMPT = 8000  # tokens: a context long enough to press on the KV cache


@dataclass
class Stage:
    name: str
    start: float
    end: float


@dataclass(eq=False)  # identity semantics: attempts live in sets and queues
class Attempt:
    run: "Run"
    number: int
    instance: int
    start: float
    reused: bool = True
    admitted: float | None = None
    first_token: float | None = None
    last_token: float | None = None
    released: float | None = None
    end: float = 0.0
    status: str = "ok"
    cause: str = ""
    stages: list = field(default_factory=list)
    done: bool = False
    state: str = "queued"  # queued, connecting, cpu_wait, cpu, network, engine
    engine_at: float | None = None  # when the engine took it (prefill began)
    preempted: bool = False  # the KV cache was over capacity when it arrived: it waited and re-prefilled
    # two layers only: the gateway's call (its start and end) and the network from the engine back to the gateway
    call_start: float | None = None
    call_end: float | None = None
    hop_back: float = 0.0

    @property
    def queued(self) -> float:
        return self.start


@dataclass(eq=False)
class Run:
    id: str
    service: str
    tenant: str
    route: str
    model: str
    input_tokens: int
    output_tokens: int
    start: float
    attempts: list = field(default_factory=list)
    stages: list = field(default_factory=list)  # retrieval / tool, under the run's root span
    end: float = 0.0
    pin: int | None = None  # an instance every attempt goes to (an instance-scoped surge)

    @property
    def ok(self) -> bool:
        return self.attempts[-1].status == "ok"


class Instance:
    def __init__(self, index: int, cap: int, cpu_workers: int, started_at: float = 0.0):
        self.index, self.cap, self.started_at = index, cap, started_at
        self.queue: deque = deque()
        self.in_flight: set = set()
        self.stalled = False
        self.incident_stalls = 0  # stalls of incidents in progress (they may overlap the scenario's own)
        self.cpu_free = cpu_workers
        self.cpu_queue: deque = deque()

    def long_in_flight(self) -> int:
        return sum(1 for a in self.in_flight if a.run.input_tokens >= LONG_PROMPT)


class Simulation:
    def __init__(self, scenario: Scenario, duration_s: float, seed: int, service: str, start_ms: float = 0.0,
                 incidents=(), layers: bool = False):
        self.s, self.duration_ms, self.service = scenario, duration_s * 1000.0, service
        self.layers = layers
        self.instance_service = f"{service}-engine" if layers else service  # what instance scopes are named after
        # TRICKY: a stream of its own, so the engine side of two layers draws what one layer does
        self._layer_rng = random.Random(f"{seed}:{service}:{scenario.name}:layers")
        self.incidents = [Active(spec, start_ms + spec.start_s * 1000.0, start_ms + spec.end_s * 1000.0)
                          for spec in incidents]
        self._overlaid: dict = {}
        self.rng = random.Random(f"{seed}:{service}:{scenario.name}")
        self.start_ms = start_ms
        self.now = start_ms
        self._heap: list = []
        self._seq = itertools.count()
        self._run_ids = itertools.count(1)
        late = scenario.late_instance_s * 1000.0 if scenario.late_instance_s > 0 else 0.0
        self.instances = [Instance(i, scenario.cap, scenario.cpu_workers,
                                   start_ms + (late if i == scenario.instances - 1 else 0.0))
                          for i in range(scenario.instances)]
        self.finished: list[Run] = []
        self.seed = seed

    # -- event loop --------------------------------------------------------------------------
    def at(self, t: float, fn, *args) -> None:
        heapq.heappush(self._heap, (t, next(self._seq), fn, args))

    def __iter__(self):
        """Finished runs, in completion order."""
        for tenant in self.s.tenants:
            self.at(self.start_ms, self._next_arrival, tenant)
        for inst in self.instances:
            if self.s.stall_every_s > 0:
                self.at(self.start_ms + self._exp(self.s.stall_every_s * 1000), self._stall, inst)
        for incident in self.incidents:
            self._schedule_incident(incident)
        while self._heap:
            self.now, _, fn, args = heapq.heappop(self._heap)
            fn(*args)
            while self.finished:
                yield self.finished.pop(0)

    # -- randomness --------------------------------------------------------------------------
    def _exp(self, mean: float) -> float:
        return self.rng.expovariate(1.0 / mean)

    def _noisy(self, median: float, sigma: float = 0.25) -> float:
        return median * math.exp(self.rng.gauss(0.0, sigma))

    def _pick(self, weighted) -> str:
        names, weights = zip(*weighted)
        return self.rng.choices(names, weights)[0]

    # -- arrivals ----------------------------------------------------------------------------
    def _rate_per_ms(self, tenant, t: float) -> float:
        frac = (t - self.start_ms) / self.duration_ms
        boost = max([m for start, length, m in tenant.bursts if start <= frac < start + length] or [1.0])
        total_share = sum(x.share for x in self.s.tenants)
        return self.s.rps * tenant.share / total_share * boost / 1000.0

    def _next_arrival(self, tenant) -> None:
        peak = self._rate_per_ms(tenant, self.now) * max([1.0] + [b[2] for b in tenant.bursts])
        t = self.now
        while True:  # thinning: a Poisson process whose rate changes with bursts
            t += self._exp(1.0 / peak)
            if t >= self.start_ms + self.duration_ms:
                return
            if self.rng.random() < self._rate_per_ms(tenant, t) / peak:
                break
        self.at(t, self._arrive, tenant)

    def _arrive(self, tenant, route: str | None = None, tokens: tuple | None = None, pin: int | None = None,
                surge: bool = False) -> None:
        """A new run of `tenant`; an incident's surge fixes its route, token medians or instance."""
        if not surge:  # the tenant's own stream goes on; a surge schedules its own
            self._next_arrival(tenant)
        prompt_median, output_median = tokens or (tenant.prompt_tokens, tenant.output_tokens)
        # the random numbers are drawn in the order they always were; the prompt is sized once the run's
        # tenant and route are known, since an incident may give them long contexts
        u, z = self.rng.random(), self.rng.gauss(0.0, 0.5)
        run = Run(
            id=f"run-{self.seed}-{self.service}-{next(self._run_ids)}", service=self.service, tenant=tenant.name,
            route=route or self._pick(self.s.routes), model=self._pick(self.s.models), input_tokens=0,
            output_tokens=max(1, int(self._noisy(output_median, 0.6))), start=self.now, pin=pin,
        )
        s = self._s(run)
        long = u < (tenant.long_prompt_share if s.long_prompt_share is None else s.long_prompt_share)
        run.input_tokens = max(1, int((12000 if long else prompt_median) * math.exp(z)))
        t = self.now
        if self.rng.random() < s.retrieval_share:
            retrieval = self._noisy(s.retrieval_ms, 0.4)
            run.stages.append(Stage("retrieval", t, t + retrieval))
            t += retrieval
        if self.layers:  # the gateway's own time before its first call
            self.at(t + 1.0 + self._layer_noisy(0.7 * s.gateway_ms), self._call, run)
            return
        self.at(t + 1.0, self._start_attempt, run)

    # -- two layers: the gateway's call crosses the network to the engine ---------------------
    def _layer_noisy(self, median: float, sigma: float = 0.35) -> float:
        return median * math.exp(self._layer_rng.gauss(0.0, sigma)) if median > 0 else 0.0

    def _call(self, run: Run) -> None:
        """The gateway calls the engine: the request reaches it after the way out; the way back is drawn now."""
        network = self._s(run).network_ms
        out, back = self._layer_noisy(network / 2), self._layer_noisy(network / 2)
        self.at(self.now + out, self._start_attempt, run, self.now, back)

    # -- gateway -----------------------------------------------------------------------------
    def _start_attempt(self, run: Run, call_start: float | None = None, hop_back: float = 0.0) -> None:
        live = [i for i in self.instances if i.started_at <= self.now]  # every instance, but before a scale-out
        if run.pin is not None:
            inst = self.instances[run.pin]
        else:
            a, b = self.rng.sample(live, 2) if len(live) > 1 else (live[0],) * 2
            inst = min((a, b), key=lambda i: len(i.queue) + len(i.in_flight))
        attempt = Attempt(run, len(run.attempts) + 1, inst.index, self.now, call_start=call_start, hop_back=hop_back)
        run.attempts.append(attempt)
        s = self._s(run, inst.index)
        if len(inst.queue) >= s.rate_limit_queue:
            self.at(self.now + 2.0, self._fail, attempt, "rate_limited")
            return
        inst.queue.append(attempt)
        # the caller's timer runs from when it called (two layers: the gateway's call, before the way out)
        self.at((self.now if call_start is None else call_start) + s.timeout_s * 1000.0, self._timeout, attempt)
        self._admit(inst)

    def _stall(self, inst: Instance) -> None:
        inst.stalled = True
        self.at(self.now + self._noisy(self.s.stall_ms, 0.3), self._unstall, inst)

    def _unstall(self, inst: Instance) -> None:
        inst.stalled = False
        self._admit(inst)
        if self.now < self.start_ms + self.duration_ms:
            self.at(self.now + self._exp(self.s.stall_every_s * 1000), self._stall, inst)

    def _admit(self, inst: Instance) -> None:
        while inst.queue and not inst.stalled and not inst.incident_stalls and len(inst.in_flight) < inst.cap:
            attempt = inst.queue.popleft()
            attempt.admitted, attempt.state = self.now, "connecting"
            inst.in_flight.add(attempt)
            s = self._s(attempt.run, inst.index)
            attempt.reused = self.rng.random() < self._reuse_probability(s)
            if attempt.reused:
                self._connected(attempt)
            else:
                connect = self._noisy(s.connect_ms, 0.5)
                attempt.stages.append(Stage("connect", self.now, self.now + connect))
                self.at(self.now + connect, self._connected, attempt)

    def _reuse_probability(self, s: Scenario) -> float:
        p = s.reuse_probability
        if s.churn_wave_minutes > 0:  # pools recycled in waves: churn differs window to window
            p += 0.4 * math.sin(2 * math.pi * (self.now - self.start_ms) / (s.churn_wave_minutes * 60000))
        return min(1.0, max(0.0, p))

    def _connected(self, attempt: Attempt) -> None:
        if attempt.done:
            return
        if self.rng.random() < self._s(attempt.run, attempt.instance).connection_error_rate:
            self._fail(attempt, "connection_error")
            return
        inst = self.instances[attempt.instance]
        attempt.state = "cpu_wait"
        inst.cpu_queue.append(attempt)
        self._start_cpu(inst)

    # -- preprocessing on the CPU pool -------------------------------------------------------
    def _start_cpu(self, inst: Instance) -> None:
        while inst.cpu_free and inst.cpu_queue:
            attempt = inst.cpu_queue.popleft()
            if attempt.done:
                continue
            inst.cpu_free -= 1
            attempt.state, t = "cpu", self.now
            tokens_k, s = attempt.run.input_tokens / 1000.0, self._s(attempt.run, inst.index)
            for name, ms in (("tokenize", s.tokenize_ms_per_1k * tokens_k), ("prompt_build", s.prompt_build_ms),
                             ("policy", s.policy_ms)):
                d = self._noisy(max(ms, 0.2))
                attempt.stages.append(Stage(name, t, t + d))
                t += d
            self.at(t, self._cpu_done, attempt)

    def _cpu_done(self, attempt: Attempt) -> None:
        inst = self.instances[attempt.instance]
        inst.cpu_free += 1
        self._start_cpu(inst)
        if attempt.done:
            return
        if self.layers:  # the network is between the layers (_call), not inside the engine
            self._engine(attempt)
            return
        hop = self._noisy(self._s(attempt.run, attempt.instance).network_ms, 0.35)
        attempt.stages.append(Stage("network", self.now, self.now + hop))
        attempt.state = "network"
        self.at(self.now + hop, self._engine, attempt)

    # -- engine ------------------------------------------------------------------------------
    def _engine(self, attempt: Attempt) -> None:
        if attempt.done:
            return
        inst, run = self.instances[attempt.instance], attempt.run
        s = self._s(run, inst.index)
        attempt.state = "engine"
        load = len(inst.in_flight) / inst.cap
        pressure = 1.0 + s.kv_pressure * inst.long_in_flight() / inst.cap
        prefill = self._noisy(s.prefill_ms_per_1k * run.input_tokens / 1000.0 * pressure + 15.0)
        if not attempt.reused:
            prefill += s.cold_start_ms * self.rng.uniform(0.3, 1.7)
        prefill += self._engine_delay(attempt, inst, s)
        if self.rng.random() < s.server_error_rate:
            self.at(self.now + prefill * self.rng.uniform(0.2, 0.9), self._fail, attempt, "server_error")
            return
        per_token = self._noisy(s.decode_ms_per_token * (1.0 + s.batch_slowdown * load), 0.15)
        attempt.first_token = self.now + prefill
        attempt.last_token = attempt.first_token + per_token * max(run.output_tokens - 1, 0)
        post = self._noisy(s.post_ms + s.post_ms_per_1k_output * run.output_tokens / 1000.0)
        attempt.released = attempt.last_token + post
        attempt.stages.append(Stage("post", attempt.last_token, attempt.released))
        self.at(attempt.released, self._release, attempt)

    def _engine_delay(self, attempt: Attempt, inst: Instance, s: Scenario) -> float:
        """First-token delay of the engine presets, without a random draw (the other presets' runs stay the same):
        preemption when the KV cache is over capacity, a fixed batching/allocation wait, a cold replica's warm-up."""
        attempt.engine_at, delay = self.now, s.extra_prefill_ms
        if s.kv_capacity_tokens:
            kv = sum(a.run.input_tokens + a.run.output_tokens for a in inst.in_flight if a.engine_at is not None)
            if kv > s.kv_capacity_tokens:
                attempt.preempted = True
                delay += s.preempt_ms * min(kv / s.kv_capacity_tokens, 3.0)
        if s.warmup_ms and self.now - inst.started_at < s.warmup_s * 1000.0 and inst.started_at > self.start_ms:
            delay += s.warmup_ms * (1.0 - (self.now - inst.started_at) / (s.warmup_s * 1000.0))
        return delay

    def _release(self, attempt: Attempt) -> None:
        if attempt.done:
            return
        self._finish(attempt, "ok", "")

    # -- incidents ---------------------------------------------------------------------------
    def _s(self, run: Run | None = None, instance: int | None = None) -> Scenario:
        """The scenario as it stands now for this run (and the instance its attempt is on): the base with the
        overlays of the incidents on now that reach it, applied in the order they were given."""
        if not self.incidents:
            return self.s
        on = tuple(i for i, inc in enumerate(self.incidents)
                   if inc.on(self.now) and inc.matches(self.instance_service, run, instance))
        if on not in self._overlaid:
            s = self.s
            for i in on:
                s = s.with_(**self.incidents[i].overlay.knobs(s))
            self._overlaid[on] = s
        return self._overlaid[on]

    def _schedule_incident(self, incident: Active) -> None:
        overlay = incident.overlay
        if overlay.surge:
            self.at(incident.start_ms, self._surge, incident)
        if overlay.stalls:
            for inst in self.instances:
                if incident.matches(self.instance_service, None, inst.index):
                    first = incident.start_ms + self._exp(overlay.stalls[0] * 1000)
                    self.at(first, self._incident_stall, incident, inst)

    def _surge(self, incident: Active) -> None:
        """Extra arrivals (a Poisson stream at surge x the base rate) of the incident's scope while it is on."""
        scope = incident.spec.scope or ("", "")
        rate = incident.overlay.surge * self.s.rps / 1000.0
        if scope[0] == "instance":  # one instance's sticky clients: its share of the surge
            rate /= len(self.instances)
        t = self.now + self._exp(1.0 / rate)
        if t >= incident.end_ms:
            return
        self.at(t, self._surge, incident)
        if self.now == incident.start_ms:
            return  # the stream's first call only schedules its first arrival
        tenants = [x for x in self.s.tenants if scope[0] != "tenant" or x.name == scope[1]]
        tenant = self.rng.choices(tenants, [x.share for x in tenants])[0]
        pin = next(i.index for i in self.instances if incident.matches(self.instance_service, None, i.index)) \
            if scope[0] == "instance" else None
        self._arrive(tenant, route=scope[1] if scope[0] == "route" else None,
                     tokens=incident.overlay.surge_tokens, pin=pin, surge=True)

    def _incident_stall(self, incident: Active, inst: Instance) -> None:
        if self.now >= incident.end_ms:
            return
        inst.incident_stalls += 1
        self.at(self.now + self._noisy(incident.overlay.stalls[1], 0.3), self._incident_unstall, incident, inst)

    def _incident_unstall(self, incident: Active, inst: Instance) -> None:
        inst.incident_stalls -= 1
        self._admit(inst)
        self.at(self.now + self._exp(incident.overlay.stalls[0] * 1000), self._incident_stall, incident, inst)

    # -- endings -----------------------------------------------------------------------------
    def _timeout(self, attempt: Attempt) -> None:
        """Streaming clients time out waiting for the first token; once tokens flow they wait."""
        seen = None if attempt.first_token is None else attempt.first_token + attempt.hop_back
        if not attempt.done and not (seen is not None and seen <= self.now):
            self._fail(attempt, "timeout")

    def _fail(self, attempt: Attempt, cause: str) -> None:
        if attempt.done:
            return
        # instants not reached by now never happened
        for name in ("first_token", "last_token", "released"):
            if (getattr(attempt, name) or 0) > self.now:
                setattr(attempt, name, None)
        attempt.stages = [st for st in attempt.stages if st.start < self.now]
        for st in attempt.stages:
            st.end = min(st.end, self.now)
        self._finish(attempt, "error", cause)

    def _finish(self, attempt: Attempt, status: str, cause: str) -> None:
        attempt.done, attempt.status, attempt.cause, attempt.end = True, status, cause, self.now
        inst = self.instances[attempt.instance]
        if attempt in inst.queue:
            inst.queue.remove(attempt)
        if attempt in inst.in_flight:
            inst.in_flight.discard(attempt)
            self._admit(inst)
        run = attempt.run
        s = self._s(run, attempt.instance)
        t = self.now
        if self.layers:  # the gateway hears of the end after the way back; a timeout is its own timer
            attempt.call_end = t = self.now + (0.0 if cause == "timeout" else attempt.hop_back)
        if status == "error" and attempt.number < s.max_attempts:
            backoff = s.backoff_ms * 2 ** (attempt.number - 1) * self.rng.uniform(0.5, 1.5)
            self.at(t + backoff, self._call if self.layers else self._start_attempt, run)
            return
        if status == "ok" and self.rng.random() < s.tool_share:
            tool = self._noisy(s.tool_ms, 0.5)
            run.stages.append(Stage("tool", t, t + tool))
            t += tool
        if self.layers:  # the gateway's own time after its last call
            t += self._layer_noisy(0.3 * s.gateway_ms)
        run.end = t + 1.0
        self.finished.append(run)


def simulate(scenario: Scenario, duration_s: float, seed: int = 1, service: str | None = None, start_ms: float = 0.0,
             incidents=(), layers: bool = False):
    """Finished runs of `scenario` over `duration_s` simulated seconds, in completion order.

    start_ms: where this stretch begins on the simulated clock. incidents: IncidentSpecs, their start_s counted
    from start_ms (check them first with simulator.incidents.check_incidents). layers: two layers, a gateway in front of
    the engine (the module's docstring; each attempt then has call_start, call_end and hop_back).
    """
    return iter(Simulation(scenario, duration_s, seed, service or scenario.services[0], start_ms, incidents, layers))
