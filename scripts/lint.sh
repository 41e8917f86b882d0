#!/usr/bin/env bash
# Runs golangci-lint over the module with .golangci.yml (staticcheck, unused, govet,
# ineffassign and gocyclo over 30; the config says why each), then
# scripts/unusedexports: exported names under internal/ that no other package uses
# (issue #31). The version is pinned
# here and installed once from the Go module proxy into a cache directory
# (FATHOM_TOOLS_CACHE, default /var/cache/fathom/tools for root, else
# ~/.cache/fathom/tools), then used from there without the network. Exit status: 0
# without findings, 2 when golangci-lint cannot be installed, else golangci-lint's
# (1: findings, listed above it), else unusedexports' (1: names listed above it, 2: the
# module does not load).
#
#   scripts/lint.sh [GO]      (make lint; make test runs it after the test suite)
set -u
cd "$(dirname "$0")/.."
GO=${1:-${GO:-go}}
# golangci-lint v2.15.0 runs staticcheck v0.8.2 (honnef.co/go/tools), gocyclo v0.6.0
# and ineffassign v0.2.0; upgrade it here, with the findings the new version brings.
GOLANGCI_LINT_VERSION=v2.15.0

log() { echo "lint: $*" >&2; }
export GOFLAGS="${GOFLAGS:-} -buildvcs=false" # nothing here is stamped; worktrees lack .git dirs
if [ -n "${FATHOM_TOOLS_CACHE:-}" ]; then cache=$FATHOM_TOOLS_CACHE
elif [ "$(id -u)" = 0 ]; then cache=/var/cache/fathom/tools
else cache=${XDG_CACHE_HOME:-$HOME/.cache}/fathom/tools; fi
bin=$cache/golangci-lint-$GOLANGCI_LINT_VERSION
lint=$bin/golangci-lint
if [ ! -x "$lint" ]; then
  log "installing golangci-lint $GOLANGCI_LINT_VERSION into $bin"
  mkdir -p "$bin" || { log "cannot create $bin (set FATHOM_TOOLS_CACHE)"; exit 2; }
  ok=
  for i in 1 2 3; do # each try bounded: a module proxy connection that stalls would hang
    if GOBIN=$bin GOFLAGS=-buildvcs=false timeout 1200 "$GO" install \
        "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION"; then ok=1; break; fi
    log "go install golangci-lint failed or stalled (try $i of 3)"
  done
  [ -n "$ok" ] || { log "golangci-lint $GOLANGCI_LINT_VERSION could not be installed"; exit 2; }
fi
"$lint" run --max-issues-per-linter 0 --max-same-issues 0 ./...
rc=$?
if [ $rc = 0 ]; then log "no findings (golangci-lint $GOLANGCI_LINT_VERSION, .golangci.yml)"
else log "findings above: fix them, or exclude one in .golangci.yml with the reason"; fi

# Exported names under internal/ that no other package uses, tests included (#31).
# scripts/unusedexports is its own module (golang.org/x/tools, fetched once into the
# module cache, then used without the network).
# Its own test first (a module of its own: `go test ./...` at the root does not reach it).
(cd scripts/unusedexports && { out=$("$GO" test -count=1 ./... 2>&1) || { echo "$out" >&2; exit 3; }; } && "$GO" run . -C ../..)
urc=$?
if [ $urc = 0 ]; then log "no exported name unused outside its package (scripts/unusedexports)"
elif [ $urc = 3 ]; then log "scripts/unusedexports's own test failed (above)"; urc=1
elif [ $urc = 1 ]; then log "exported names above are used by no other package: unexport each (cd scripts/unusedexports && go run . -C ../.. -fix), or add it to scripts/unusedexports/allow.txt with the reason"
else log "scripts/unusedexports could not load the module (above)"; fi
[ $rc = 0 ] && rc=$urc
exit $rc
