# lockgate — build, test and measure. `make test` is what CI runs.
GO      ?= go
PKGS    := ./...
BIN     := bin/
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS := -s -w -X github.com/lockgate/lockgate/internal/version.Version=$(VERSION)
FUZZTIME ?= 30s

.PHONY: all build install test test-agents stress test-deps lint cover bench fuzz docs release-check clean

all: build

# A static binary (CGO_ENABLED=0) starts faster: a hook runs on every commit.
# lockgate and the hook binary lockgate-hook, which the installed hooks run
# when it is next to lockgate (docs/hooks.md, The hook binary).
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/...

install:
	CGO_ENABLED=0 $(GO) install -trimpath -ldflags '$(LDFLAGS)' ./cmd/...
	@bin=$$($(GO) env GOBIN); echo "installed lockgate and lockgate-hook in $${bin:-$$($(GO) env GOPATH)/bin}"

# test-deps makes sure the real tools the tests drive are present.
test-deps:
	@scripts/test-deps.sh

# Every test package runs under an explicit deadline: a hang fails the run
# instead of stalling CI. The process races run a share of their rounds
# (LOCKGATE_TEST_ROUNDS, a percentage; see internal/gittest/rounds.go);
# `make stress` runs them in full.
# GORACE: a -race binary sleeps a second before it exits; tests start many.
# -parallel: many tests mostly wait (for processes they start, a lock's
# expiry, a Redis failover), so each package runs four at a time, not one
# per core. The timeout only stops a hung package: cmd/lockgate's fleets
# take most of 17 minutes on a busy 2-core machine.
TEST_TIMEOUT ?= 30m
TEST_PARALLEL ?= 4
RACE_ENV := GORACE="atexit_sleep_ms=0 $(GORACE)"
test: test-deps
	@$(MAKE) --no-print-directory lint
	$(RACE_ENV) $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) -parallel $(TEST_PARALLEL) $(PKGS)

# test-agents runs the real coding-agent CLIs (Claude Code, Codex, Gemini
# CLI, opencode, Copilot CLI: npm packages, pinned, installed once by
# scripts/test-agents-deps.sh into a cache outside the repository, about
# 1.5 GB) headless against a scripted model, in repositories set up by
# `lockgate init --agent NAME`; and a rogue agent among honest ones on the
# git store (TestRogueAgentFleet), run alone rather than beside the other
# fleets. Kept out of `make test` for the download; CI runs both. AGENTS_RUN=TestCapture also runs the rig's own checks of
# each harness's hook conventions.
AGENTS_RUN ?= TestRealHarnesses|TestRogueAgentFleet
test-agents:
	@scripts/test-agents-deps.sh >/dev/null
	$(GO) test -tags agents -count=1 -timeout 30m -run '$(AGENTS_RUN)' ./cmd/lockgate ./internal/agenttest

# stress runs the multi-process races (lock grants, takeovers, kills, the
# workflow branch, Redis across machines, the fleet verified) at their
# full round counts.
STRESS_RUN ?= Race|Process|Mixed|Concurrent|Kill|Fleet
stress: test-deps
	$(RACE_ENV) LOCKGATE_TEST_ROUNDS=100 $(GO) test -race -count=1 -timeout 60m -run '$(STRESS_RUN)' $(PKGS)

# --allow-serial-runners: golangci-lint refuses to run beside another
# instance on the machine (a second `make test`); this makes it wait.
# TestLayers holds .golangci.yml's layer rules and docs/architecture.md's
# layer table to each other and to the imports (docs/architecture.md).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	PATH="$$($(GO) env GOPATH)/bin:$$PATH" golangci-lint run --allow-serial-runners $(PKGS)
	$(GO) test -count=1 -run '^TestLayers' ./cmd/lockgate

cover:
	$(GO) test -count=1 -coverprofile=coverage.out $(PKGS)
	$(GO) tool cover -func=coverage.out | tail -n 1

bench:
	@scripts/bench.sh

# docs regenerates the generated pages: docs/cli.md, every command's help,
# docs/schema/*.json, the JSON Schemas of .lockgate.yaml and
# work-packages.yaml, and the import table of docs/architecture.md
# (TestCLIReferenceCurrent, TestSchemasCurrent and
# TestArchitectureImportsCurrent fail in `make test` when one is stale).
docs:
	LOCKGATE_UPDATE_DOCS=1 $(GO) test -count=1 -run '^TestCLIReferenceCurrent$$' ./frontend/cli
	LOCKGATE_UPDATE_DOCS=1 $(GO) test -count=1 -run '^TestSchemasCurrent$$' ./model/config
	LOCKGATE_UPDATE_DOCS=1 $(GO) test -count=1 -run '^TestArchitectureImportsCurrent$$' ./cmd/lockgate

# fuzz runs every fuzz target for FUZZTIME each.
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; $(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) $$pkg; \
	  done; \
	done

# release-check validates .goreleaser.yaml and builds a snapshot of every
# release binary into dist/ (minutes: four cross builds), then checks that
# each is a static executable of its platform and that the one for this
# machine runs. Not part of `make test`.
GORELEASER_VERSION ?= v2.15.1
release-check:
	@command -v goreleaser >/dev/null 2>&1 || [ -x "$$($(GO) env GOPATH)/bin/goreleaser" ] || \
	  $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)
	PATH="$$($(GO) env GOPATH)/bin:$$PATH" goreleaser check
	PATH="$$($(GO) env GOPATH)/bin:$$PATH" goreleaser release --snapshot --clean --skip=publish
	@scripts/release-check.sh dist

clean:
	rm -rf bin dist coverage.out
