# fathom — build and test.
#
#   make quickstart   build and run the quickstart on the embedded SQLite default
#   make test         start (or install) PostgreSQL and MariaDB, then run every test
#
GO ?= go
# The version recorded with every run (provenance): the git commit when there is one.
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/fathom-lab/fathom/internal/cli.Version=$(VERSION)

.PHONY: build quickstart test test-unit bench vet

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/fathom ./cmd/fathom

quickstart: build
	./bin/fathom quickstart

# The test command: makes sure PostgreSQL and MariaDB are running (starting them, or
# installing them from Debian packages when running as root), exports their DSNs and
# runs all tests. CI runs this with FATHOM_TEST_REQUIRE=1. Modules are fetched first,
# each try bounded: a module proxy connection that stalls would otherwise hang go test.
test:
	@for i in 1 2 3; do timeout 300 $(GO) mod download && break; echo "go mod download failed or stalled (try $$i of 3)" >&2; done
	./scripts/test-servers.sh $(GO) test -count=1 -timeout 20m ./...

test-unit:
	$(GO) test -count=1 ./...

vet:
	$(GO) vet ./...

bench: build
	./bench/vs-anchors.sh
