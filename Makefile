# Gatehouse — run `make` for the list of targets.
SHELL := /bin/bash
GO ?= go
# ADDR, when set (make run ADDR=127.0.0.1:9000), is passed as --addr; unset, the server
# reads GATEHOUSE_ADDR or its default 127.0.0.1:8080, like every other setting.
ADDR ?=
TEMPL_FLAGS := $(shell sed -n 's/^generate_flags *= *"\(.*\)"/\1/p' templ.toml)
TEST_TIMEOUT ?= 20m

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-13s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: ## serve on the embedded SQLite default (./data/gatehouse.db) and print the URL (ADDR=host:port or GATEHOUSE_* settings)
	$(GO) run ./cmd/gatehouse serve$(if $(ADDR), --addr $(ADDR))

.PHONY: build
build: ## build bin/gatehouse
	$(GO) build -o bin/gatehouse ./cmd/gatehouse

.PHONY: install
install: ## install gatehouse on the PATH (into $(go env GOBIN), else $(go env GOPATH)/bin)
	$(GO) install ./cmd/gatehouse
	@echo "installed $$(command -v gatehouse || echo "$$($(GO) env GOPATH)/bin/gatehouse (add $$($(GO) env GOPATH)/bin to your PATH)")"
	@echo "shell completion: gatehouse completion bash|zsh|fish|powershell (see docs/cli.md)"

.PHONY: generate
generate: ## regenerate templ components (committed)
	@if [ -d views ]; then $(GO) tool templ generate $(TEMPL_FLAGS) -path views; else echo "no views/ directory: nothing to generate"; fi

.PHONY: clients
clients: ## install the real clients the tests drive (MCP SDKs and servers, Claude Code; pinned in package-lock.json)
	@if ! command -v npm >/dev/null; then echo "npm not found: the real-client tests will skip (install Node.js 20 or newer)"; \
	elif [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then \
		npm ci --no-audit --no-fund; fi

.PHONY: test
test: clients ## run every test with -race, on SQLite and (when GATEHOUSE_TEST_DATABASE_URL is set or a local Postgres answers) on Postgres
	@source scripts/test-env.sh && $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...

# A count, not a duration: with -fuzztime as a duration, Go's fuzzing engine can fail a
# target with "context deadline exceeded" when its deadline lands while a worker is
# busy, which failed a CI run on a loaded machine; a count has no deadline.
FUZZTIME ?= 100000x
# Every fuzz target of a decoder of untrusted input, as package:FuzzName.
FUZZ_TARGETS := \
	./internal/elicit:FuzzParseVerdict \
	./internal/agents/claude:FuzzDecode \
	./internal/agents/codex:FuzzDecode \
	./internal/agents/codexcli:FuzzDecode \
	./internal/agents/copilot:FuzzDecode \
	./internal/agents/cursor:FuzzDecode \
	./internal/agents/acp:FuzzDecode \
	./internal/agents/gemini:FuzzDecode \
	./internal/agents/opencode:FuzzDecode \
	./internal/adapters/mcp:FuzzUntrustedInput \
	./internal/prompt:FuzzSubmit \
	./internal/shell:FuzzParse \
	./internal/shell:FuzzAllow \
	./internal/risk:FuzzAssess \
	./handlers:FuzzEvaluateBody

.PHONY: fuzz
fuzz: ## run every fuzz target for FUZZTIME inputs each (seed corpora live in testdata/fuzz)
	@set -e; for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; done

.PHONY: bench
bench: ## measure SPEC §9 (latency, capacity, fan-out, throughput) on SQLite and Postgres beside the floor and the FastAPI peer; prints one table
	$(GO) build -o bin/gatehouse ./cmd/gatehouse
	$(GO) build -o bin/gatehouse-bench ./cmd/gatehouse-bench
	./bin/gatehouse-bench -gatehouse bin/gatehouse $(BENCH_FLAGS)

CHAOS_DURATION ?= 60s

.PHONY: chaos
chaos: ## run the chaos test alone for CHAOS_DURATION (default 60s): 3 replicas, SIGKILLs and a Postgres restart under load
	@source scripts/test-env.sh && GATEHOUSE_CHAOS_DURATION=$(CHAOS_DURATION) $(GO) test -race -count=1 -v -timeout 10m -run '^TestChaos$$' ./cmd/gatehouse/

.PHONY: test-browser
test-browser: ## run the browser tests alone (headless Chromium: apt-get install -y chromium); screenshots go to ./artifacts
	$(GO) test -count=1 -v ./uitest/

.PHONY: screenshots
screenshots: ## regenerate the README's screenshots in docs/images (headless Chromium)
	GATEHOUSE_README_IMAGES=$(CURDIR)/docs/images GATEHOUSE_REQUIRE_CHROMIUM=1 $(GO) test -count=1 -run '^TestBrowserReadmeScreenshot$$' ./uitest/

.PHONY: lint
lint: ## gofmt, go vet and staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '_templ.go$$')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

.PHONY: check
check: lint ## lint, verify generated files are fresh, then test
	@$(MAKE) --no-print-directory generate >/dev/null && git diff --exit-code -- views || (echo "generated templ files are stale: run make generate and commit"; exit 1)
	@$(MAKE) --no-print-directory test
