# mcpwire — build, test, benchmark and run.
# Every target installs what it needs (Go modules through the module proxy).

GO        ?= go
BIN       := bin/mcpwire
FUZZTIME  ?= 10s
BENCHTIME ?= 1s
BENCHCOUNT ?= 6
STATICCHECK_VERSION := v0.8.2

.PHONY: all help build pgo test vet race fuzz fuzz-short bench lint cross run demo clean

all: build

## help: this list: every target with what it does (from the "## target:" comments of this Makefile).
help:
	@awk '/^## [a-z][a-z0-9-]*:/ { sub(/^## /, ""); i = index($$0, ":"); printf "  %-20s %s\n", substr($$0, 1, i - 1), substr($$0, i + 2) }' $(MAKEFILE_LIST)

## build: bin/mcpwire, the command (serve, load, probe, call, demo); built with the profile cmd/mcpwire/default.pgo (profile-guided optimization, `make pgo`).
build:
	$(GO) build -o $(BIN) ./cmd/mcpwire

## pgo: cmd/mcpwire/default.pgo again, from CPU profiles of the reference server under the standard fixture on HTTP, HTTPS, the legacy endpoint, stdio, TCP and Unix (profiles/pgo.sh; installs wrk; about a minute).
pgo:
	@command -v wrk >/dev/null 2>&1 || { SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO="sudo"; $$SUDO apt-get update -qq >/dev/null; DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends wrk >/dev/null; }
	./profiles/pgo.sh

## test: README's second command: vet, then every test of the root module and of every nested module with tests under the race detector (order shuffled, the seed printed), each fuzz target's seeds and testdata/fuzz/ corpus replayed as plain tests; no timed fuzzing (that is fuzz-short, which .ci/run runs after this).
test: vet race

## vet: go vet on every package of the root module and of every nested module with tests (NESTED_MODULES).
vet:
	$(GO) vet ./...
	@set -e; for m in $(NESTED_MODULES); do echo "== $$m (nested module)"; (cd $$m && $(GO) vet ./...); done

## race: every test under the race detector, shuffled, fuzz corpora replayed (the second part of `make test`); then the tests of every nested module that has some (NESTED_MODULES: bench/ today).
NESTED_MODULES = $(sort $(foreach m,$(patsubst ./%/go.mod,%,$(shell find . -mindepth 2 -name go.mod -not -path './bin/*')),$(if $(shell find $(m) -name '*_test.go' -print -quit),$(m))))
race:
	$(GO) test -race -shuffle=on -count=1 -timeout 15m ./...
	@set -e; for m in $(NESTED_MODULES); do echo "== $$m (nested module)"; (cd $$m && $(GO) test -race -shuffle=on -count=1 -timeout 10m ./...); done

## fuzz-short: timed fuzzing, each fuzz target for FUZZTIME (10s by default); .ci/run runs it after `make test`, and a finding fails it (the input lands in the package's testdata/fuzz/: fix the bug, keep the input).
fuzz-short:
	FUZZTIME=$(FUZZTIME) ./.ci/fuzz.sh

## fuzz: timed fuzzing, each fuzz target for 60s.
fuzz:
	FUZZTIME=60s ./.ci/fuzz.sh

## bench: every micro-benchmark with allocations, BENCHCOUNT runs, into bench/out/ for benchstat; then the end-to-end ones (bench/e2e: HTTP, stdio, TCP, Unix, HTTP fan-out).
bench:
	mkdir -p bench/out
	$(GO) test -p 1 -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) -count=$(BENCHCOUNT) ./framing/ ./codec/ ./mcp/ ./engine/... ./transport/... ./client/... ./state/... ./observe/... | tee bench/out/bench.txt
	cd bench && $(GO) test -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) ./e2e/ | tee out/e2e.txt

## lint: gofmt, go vet and staticcheck (installed at its pinned version if missing); CI runs it first.
lint:
	@fmt=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$fmt" ]; then echo "gofmt needed:"; echo "$$fmt"; exit 1; fi
	$(GO) vet ./...
	@command -v staticcheck >/dev/null 2>&1 || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" staticcheck ./...

## cross: for linux, darwin and windows on amd64 and arm64 (CROSS_TARGETS): build and vet every package (tests included), link cmd/mcpwire to a throwaway file; nothing runs. Built without the profile (-pgo=off): it changes what is inlined, never whether it compiles, and would rebuild every dependency for each target.
CROSS_TARGETS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
cross:
	@set -e; for t in $(CROSS_TARGETS); do \
		os=$${t%/*}; arch=$${t#*/}; echo "== $$os/$$arch"; \
		GOOS=$$os GOARCH=$$arch $(GO) build -pgo=off ./...; \
		GOOS=$$os GOARCH=$$arch $(GO) vet ./...; \
		GOOS=$$os GOARCH=$$arch $(GO) build -pgo=off -o /dev/null ./cmd/mcpwire; \
	done

## run: the reference server on stdio (type JSON-RPC lines; Ctrl-D ends it).
run: build
	$(BIN) serve --stdio

## demo: build, start the reference server, exercise it end to end, short load run, stop.
demo: build
	$(BIN) demo

## clean: remove bin/ and bench/out/.
clean:
	rm -rf bin bench/out

## conformance: the official MCP conformance suite (pinned; installed into MCP_TOOLS_HOME) against bin/mcpwire over HTTP, 2026-07-28 requirement set.
conformance: build
	./.ci/conformance.sh

## conformance-legacy: the same suite with the 2025-11-25 requirement set against `serve --legacy-path /mcp-2025` (transport/legacy: sessions, GET stream, server→client requests).
conformance-legacy: build
	./.ci/conformance-legacy.sh

## interop: TS SDK v2, go-sdk and mcp-go clients (pinned) against bin/mcpwire over HTTP and stdio, each run's wire traffic checked.
interop: build
	./.ci/interop.sh

## conformance-client: the suite's client leg (pinned) against our client (client/) through `bin/mcpwire conformance-client`, every 2026-07-28 client scenario (auth/* through client/oauth) plus the 6 auth extensions (client credentials basic and JWT, enterprise-managed, WIF JWT bearer, DPoP, DPoP nonces).
conformance-client: build
	./.ci/conformance-client.sh

## interop-client: our client (client/; `bin/mcpwire probe` and `call`) against real servers, pinned: go-sdk everything-server (stateless, stateful; HTTP and stdio), mcp-go conformance server (HTTP) and everything example (stdio), TS SDK v1 on HTTP+SSE, TS SDK v2 server (HTTP and stdio).
interop-client: build
	./.ci/interop-client.sh

.PHONY: conformance conformance-legacy interop conformance-client interop-client

## interop-legacy: 2025-11-25 clients (TS SDK v1 1.32.2, Inspector v1 CLI 1.0.3; pinned) against `serve --legacy-path /mcp-2025` and the stdio legacy mode, directly and through MIGRATION.md's HAProxy and nginx examples (checked with haproxy -c and nginx -t; both installed if missing), each run's wire checked; the go-sdk stateful everything-server as the control.
interop-legacy: build
	./.ci/interop-legacy.sh

.PHONY: interop-legacy

## compare: side-by-side table (mcpwire vs go-sdk vs mcp-go vs raw ceilings: HTTP, stdio, TCP and Unix at 1x64 and 64x1) under `mcpwire load`, mcpwire HTTPS next to plain HTTP under wrk, and the TCP rows under tsung (installed by the target; TSUNG=0 skips), then the client rows of compare-clients (CLIENTS=0 skips; skipped with ONLY); ROUNDS, DURATION, ONLY env.
compare:
	./bench/compare.sh
	@if [ "$${CLIENTS:-1}" != 0 ] && [ -z "$${ONLY:-}" ]; then $(MAKE) --no-print-directory compare-clients; fi

## compare-conns: 10,000 mostly idle socket connections, mcpwire vs raw gnet: RSS per idle connection, then p50/p99 with one call per connection per second; CONNS, DURATION env.
compare-conns:
	$(GO) build -o $(BIN) ./cmd/mcpwire
	cd bench && $(GO) build -o ../bin/bench-rawgnet ./servers/rawgnet && $(GO) build -o ../bin/bench-idleconns ./cmd/idleconns
	bin/bench-idleconns -n $${CONNS:-10000} -d $${DURATION:-10s} \
		-row 'mcpwire=$(BIN) serve --tcp ADDR --log-level error --max-conns-per-ip -1' \
		-row 'raw-gnet=bin/bench-rawgnet -tcp ADDR -splice-id'

## compare-fanout: subscriptions/listen fan-out (1,000 and 5,000 streams) against mcpwire, go-sdk, mcp-go and a raw SSE server; LISTENERS, PUBLISH_RATE env.
compare-fanout:
	./bench/compare.sh --fanout

## compare-clients: client round trips (tools/call echo, closed loop, 1 and 16 callers): our client (client/) vs the go-sdk and mcp-go clients over HTTP and stdio (TCP: ours only) against bin/mcpwire serve; calls/s, p50/p99, client CPU and allocations per call; ROUNDS, DURATION, CALLERS, ONLY env.
compare-clients:
	$(GO) build -o $(BIN) ./cmd/mcpwire
	cd bench && $(GO) build -o ../bin/bench-clientrt ./cmd/clientrt
	bin/bench-clientrt -bin bin -out bench/out -rounds $${ROUNDS:-3} -d $${DURATION:-5s} -c $${CALLERS:-1,16} -only "$${ONLY:-}"

.PHONY: compare compare-fanout compare-conns compare-clients

## baseline: every micro-benchmark, 6 runs, into profiles/base.txt (compare later runs with benchstat).
baseline:
	$(GO) test -p 1 -run='^$$' -bench=. -benchmem -count=6 ./framing/ ./codec/ ./mcp/ ./engine/... ./transport/... ./client/... ./state/... ./observe/... > profiles/base.txt
	@command -v benchstat >/dev/null 2>&1 || $(GO) install golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" benchstat profiles/base.txt > profiles/base.benchstat.txt
	@echo "baseline: profiles/base.txt, summary in profiles/base.benchstat.txt"

## profile: CPU and allocation profiles of the reference server under HTTP and stdio load, into profiles/.
profile:
	./.ci/profile.sh

.PHONY: baseline profile

## cluster: redis-server, 3 replicas sharing it (--state redis://) and HAProxy (deploy/haproxy.cfg) on loopback free ports, until Ctrl-C; Debian redis-server and haproxy installed if missing. CLUSTER=3: a 3-master Redis Cluster (sharded pub/sub) instead of the one redis-server.
cluster: build
	CLUSTER=$(CLUSTER) ./deploy/cluster.sh

## cluster-test: the multi-replica test (deploy/clustertest, build tag cluster): fan-out across replicas, > 1,024 streams through the balancer, SIGKILL/SIGTERM of a replica, a Redis outage, handles across replicas; then the store-dependent checks again on a 3-master Redis Cluster, with a shard channel's slot moved and a master killed and restarted.
cluster-test: build
	./deploy/cluster.sh --install
	$(GO) test -tags cluster -count=1 -timeout 4m -v ./deploy/clustertest/

## cluster-bench: the scale-out figures (deploy/clusterbench) on the cluster of `make cluster`, once per CLUSTERBENCH_MODES (default "0 3": one redis-server, then a 3-master Redis Cluster): publish→receive latency of listen streams opened through HAProxy, as an update reaches 1 to 1,000 of 1,000 streams, touch straight to the replicas; publishes/s; draft_create/append/read calls/s with 16 callers through HAProxy; CPU of every process. CLUSTERBENCH_FLAGS env (e.g. -runs 1@1000 -d 5s -phases fanout).
CLUSTERBENCH_MODES ?= 0 3
cluster-bench: build
	./deploy/cluster.sh --install
	$(GO) build -o bin/clusterbench ./deploy/clusterbench
	for m in $(CLUSTERBENCH_MODES); do CLUSTER=$$m ./deploy/cluster.sh -- bin/clusterbench $${CLUSTERBENCH_FLAGS:-} || exit 1; done

.PHONY: cluster cluster-test cluster-bench

## report-test: the HTML reports (mcpwire load -html, make compare's charts) opened in headless Chromium (Debian package chromium, installed if missing): every chart drawn, with its points, bars, labels and colours; required here (MCPWIRE_REQUIRE_CHROMIUM), skipped by a plain go test without chromium.
report-test:
	@command -v chromium >/dev/null 2>&1 || { SUDO=; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
		$$SUDO apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null; }
	MCPWIRE_REQUIRE_CHROMIUM=1 $(GO) test -count=1 -run Chromium ./internal/chart/... ./internal/load/
	cd bench && MCPWIRE_REQUIRE_CHROMIUM=1 $(GO) test -count=1 -run Chromium ./cmd/compare/

.PHONY: report-test

## soak: mixed calls, listen streams and progress on HTTP, stdio, TCP and Unix for SOAK (default 2m; e.g. SOAK=10m), RSS, goroutines and live heap of each server sampled through its --admin listener; fails on a drift over 10 % between the warm-up plateau and the end, an echo p99 that grows over four times (+40 ms) between them, or goroutines left once idle (internal/soak, build tag soak). SOAK_FLAGS adds flags (-rate, -workers, -sample, -transports); echo latency is reported per transport.
SOAK ?= 2m
soak: build
	$(GO) test -tags soak -count=1 -timeout 2h -run TestSoak -v ./internal/soak -args -soak $(SOAK) -bin $(CURDIR)/$(BIN) $(SOAK_FLAGS)

.PHONY: soak
