# fathom — build and test.
#
#   make quickstart   build and run the quickstart on the embedded SQLite default
#   make test         install what the tests need (or say in one line what is missing), start
#                     PostgreSQL, MariaDB and Redis, run every test, cross-build, run every
#                     fuzz target for 20,000 executions and the PostgreSQL 16-18 matrix
#   make prereq       only the first step of make test (scripts/test-servers.sh --prepare)
#   make lint         golangci-lint with .golangci.yml (scripts/lint.sh installs the pinned
#                     version once); make test runs it before the test suite
#   make cross        build ./cmd/fathom for every supported platform (PLATFORMS)
#   make fuzz         every fuzz target for FUZZTIME (default 3s)
#
GO ?= go
# The version and commit recorded with every run (provenance), from git when there is
# one; without these flags they come from Go's build information (see `fathom version`).
VERSION ?= $(shell git describe --always --dirty 2>/dev/null)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X github.com/fathom-lab/fathom/internal/cli.Version=$(VERSION) -X github.com/fathom-lab/fathom/internal/cli.Commit=$(COMMIT)

# What the PostgreSQL 16-18 matrix runs (scripts/test-servers.sh --pg-matrix): the code
# whose queries depend on the server version.
PG_MATRIX_PACKAGES ?= ./internal/collect/... ./internal/check/... ./internal/instance/... ./internal/db/postgres/instance/
# and the stall rules provoked on a throwaway server of each version.
PG_MATRIX_STALLS ?= TestProvokedStallsPostgres

.PHONY: build quickstart test prereq test-unit bench vet lint cross fuzz

# The platforms fathom builds for (docs/install.md: Platforms). Pure Go, so CGO_ENABLED=0.
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64 freebsd/amd64 freebsd/arm64

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/fathom ./cmd/fathom

quickstart: build
	./bin/fathom quickstart

# The test command, ordered so that a failure shows early: first what the tests need
# (programs, servers, the PostgreSQL 16-18 builds: installed when running as root with
# apt-get, else named in one line; under FATHOM_TEST_REQUIRE=1, as CI runs it, a gap
# stops here), then the modules (each try bounded: a module proxy connection that stalls
# would otherwise hang go test), the linters (minutes, where the suite takes far
# longer: a new finding fails here), the whole test suite, the builds for every platform (a
# Linux-only call outside the build-tagged files fails there, not on a user's Mac), the
# fuzz targets and the version matrix.
test: prereq
	@for i in 1 2 3; do timeout 300 $(GO) mod download && break; echo "go mod download failed or stalled (try $$i of 3)" >&2; done
	./scripts/lint.sh $(GO)
	./scripts/test-servers.sh $(GO) test -count=1 -timeout 45m ./...
	@$(MAKE) --no-print-directory cross GO=$(GO)
	FUZZTIME=20000x GO=$(GO) ./scripts/fuzz-short.sh
	./scripts/test-servers.sh --pg-matrix $(GO) test -count=1 -timeout 20m $(PG_MATRIX_PACKAGES)
	./scripts/test-servers.sh --pg-matrix $(GO) test -count=1 -timeout 20m -run '$(PG_MATRIX_STALLS)' ./internal/analyze/

prereq:
	./scripts/test-servers.sh --prepare

# Builds the binary for each of PLATFORMS (tests run on Linux only, so test files are
# not cross-compiled).
cross:
	@set -e; for p in $(PLATFORMS); do \
		echo "cross: $$p"; \
		CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build -o /dev/null ./cmd/fathom; \
	done

# Every fuzz target for FUZZTIME each (default 3s; e.g. make fuzz FUZZTIME=2m).
fuzz:
	FUZZTIME=$(or $(FUZZTIME),3s) GO=$(GO) ./scripts/fuzz-short.sh

test-unit:
	$(GO) test -count=1 ./...

vet:
	$(GO) vet ./...

lint:
	./scripts/lint.sh $(GO)

bench: build
	./bench/vs-anchors.sh
