# Two commands do all set-up on a fresh machine: `make run` (the product) and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: run test test-fast bench bench-detect bench-live bench-ingest bench-simulate bench-analysis bench-freshness bench-receivers bench-ui bench-scale chaos fuzz venv clean

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -r requirements.txt
	touch $@

venv: $(VENV)/.installed

# PORT= (web and OTLP/HTTP, default 8000) and GRPC_PORT= (OTLP/gRPC, default 4317) choose the ports, HOST= the address
run: venv
	$(PY) manage.py migrate --noinput
	$(PY) manage.py ensure_demo_login
	$(PY) manage.py up --demo --host $${HOST:-127.0.0.1} --port $${PORT:-8000} --grpc-port $${GRPC_PORT:-$${OTLP_GRPC_PORT:-4317}}

# Tests use the machine's PostgreSQL (DATABASE_URL) and Redis; .ci/run starts them when absent.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/latency_obs
# The client tests (tests/clients: real gateways and SDKs, each 200 calls streamed by a local server at 1.3 s a call)
# mostly wait on those streams: they run as a pytest of their own (one process, its own test DB and chDB store) beside
# the rest, so that their minutes of waiting do not hold a worker; their output follows the rest's (also in
# test-artifacts/clients.log). After them, in the same lane, the as-run incidents test (AS_RUN_TESTS: a running `up`
# judging a burst, its bar every service judged within 3 minutes): both lanes' bars are timings, and side by side its
# `up` (nice -5) starved the gateways (a proxy's caller waited 3.1 s for a first chunk served in 0.3 s) while they and
# the workers slowed the `up` past its 3 minutes (2 of 3 runs on a slower machine, 2026-11-30). With PYTEST_ARGS: one
# pytest, as given.
# The rest runs on TEST_WORKERS workers, one more than the 2 cores: its longest tests wait too (the as-run burst's
# worker waited on its `up` subprocess: 48 CPU-s of its own in 656 s, 2026-11-29), and a third worker fills those
# waits; a fourth only adds contention (one machine, 2026-11-29, warm: 4 workers 14:23 and 1,425 CPU-s in the rest;
# 3 workers 13:51 and 1,356, 13:44 and 1,350 on the code around it). It runs at nice +TEST_NICE so that the client
# tests, whose bars are timings of real clients and gateways (a gateway's first token within 15 % of the served one:
# missed in a cold run beside two equal workers, 2026-11-29), get the cores first when both want them.
CLIENT_TESTS := tests/clients
AS_RUN_TESTS := tests/analysis/test_incidents_as_run.py
TEST_WORKERS ?= 3
TEST_NICE ?= 5
test: venv
ifeq ($(strip $(PYTEST_ARGS)),)
	@export DATABASE_URL=$${DATABASE_URL:-$(TEST_DATABASE_URL)}; mkdir -p test-artifacts; \
	{ $(PY) -m pytest -n 0 $(CLIENT_TESTS); own=$$?; $(PY) -m pytest -n 0 $(AS_RUN_TESTS) && exit $$own; } \
		> test-artifacts/clients.log 2>&1 & clients=$$!; \
	trap 'kill $$clients 2>/dev/null' INT TERM; \
	nice -n $(TEST_NICE) $(PY) -m pytest -n $(TEST_WORKERS) --ignore=$(CLIENT_TESTS) --ignore=$(AS_RUN_TESTS); rest=$$?; \
	wait $$clients; own=$$?; echo "--- $(CLIENT_TESTS), then $(AS_RUN_TESTS), run beside the rest (exit $$own):"; \
	cat test-artifacts/clients.log; [ $$rest -eq 0 ] && [ $$own -eq 0 ]
else
	DATABASE_URL=$${DATABASE_URL:-$(TEST_DATABASE_URL)} $(PY) -m pytest $(PYTEST_ARGS)
endif

# everything not marked slow (no simulator presets, servers, subprocesses or browser, nor the files of tests that take
# 0.8 s or more each: tests/conftest.py SLOW_FILES): the inner loop; the fuzzing tests run 120 cases each here
# (HYPOTHESIS_PROFILE=quick), 400 in make test
test-fast: venv
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-quick} DATABASE_URL=$${DATABASE_URL:-$(TEST_DATABASE_URL)} $(PY) -m pytest -m "not slow" $(PYTEST_ARGS)

bench: bench-ingest bench-simulate bench-analysis bench-ui

# OTLP/HTTP into up; BENCH_INGEST_ARGS="--baseline acbab63 --repeat 2" (A/B with a git ref), "--steps" (us a span per step)
bench-ingest: venv
	$(PY) benchmarks/bench_ingest.py $(BENCH_INGEST_ARGS)
	$(PY) benchmarks/bench_metrics.py

bench-simulate: venv
	$(PY) benchmarks/bench_simulate.py

bench-analysis: venv
	$(PY) benchmarks/bench_analysis.py

# the running product judging a burst (24 services x 2 h; BENCH_DETECT_ARGS="--services 200" or "--live 50")
bench-detect: venv
	$(PY) benchmarks/bench_detect.py $(BENCH_DETECT_ARGS)

# what a fresh read costs (analysis/rollups/freshness.py): the check, and materializing the current hour on demand
bench-freshness: venv
	$(PY) benchmarks/bench_freshness.py

# the receive tier: 1 and 2 receivers (serve_web, INGEST_WRITER=off) + serve_writer, and `up` beside them
BENCH_RECEIVERS_ARGS ?= --spans 200000 --repeat 2 --up
bench-receivers: venv
	$(PY) benchmarks/bench_receivers.py $(BENCH_RECEIVERS_ARGS)

# pages of the running up while a sender sends 5,000 spans/s and the minute jobs run (BENCH_LIVE_ARGS="--idle",
# "--baseline HEAD~1 --rounds 2" for the code before beside this checkout's)
bench-live: venv
	$(PY) benchmarks/bench_live.py $(BENCH_LIVE_ARGS)

# BENCH_SPANS=200000 for a quick run (default 10 million)
bench-ui: venv
	$(PY) benchmarks/bench_ui.py

# how page time grows with stored spans (1M, 10M, 30M over 7 days) and window (1 h, 24 h, 7 d); BENCH_SIZES= to choose
bench-scale: venv
	$(PY) benchmarks/bench_scale.py

# reliability drills (kill -9, ClickHouse down, poison request, slow clients, 100k services); exits 1 when a promise fails
chaos: venv
	$(PY) benchmarks/chaos.py $(CHAOS_ARGS)

# hostile OTLP/HTTP and API requests in-process (tests/ingest/fuzzing.py), 100,000 by default: several
# minutes; prints answers by status and reason, exits 1 on any undocumented answer or 5xx but a documented 503
fuzz: venv
	$(PY) benchmarks/fuzz_ingest.py --cases $${FUZZ_CASES:-100000} $(FUZZ_ARGS)

clean:
	rm -rf $(VENV) var
