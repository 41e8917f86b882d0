#!/usr/bin/env bash
# Runs every fuzz target in the module for a short budget each (FUZZTIME, default 3s):
# the seed corpus and some new inputs, so that a parser that echoes a password or panics
# on a malformed input fails CI. FUZZTIME is either a duration (3s, 2m) or a count of
# executions (20000x); `make test` uses a count.
#
# Why a count in CI: Go up to 1.26 has a race in its fuzz coordinator (go.dev/issue/75804,
# fixed in 1.27): when a duration budget expires while a worker is busy, the target fails
# with a bare "context deadline exceeded" although nothing was found. A count has no
# deadline to race. With a duration, such a bare failure (no failing input written, no
# panic, no test error) is run once more before it counts; any other failure fails at once.
# Targets are found by their declarations, so a new Fuzz function is included as is.
set -u
fuzztime=${FUZZTIME:-3s}
# Each input that reaches new code is minimized before it joins the corpus, for up to a
# minute by default, while the count of executions stands still (seen: FuzzMaskSecrets
# at 20000x spent 55 s of its 79 s on one such input). Ten seconds bounds that; a
# failing input is minimized as long, which is enough to read it.
minimize=${FUZZMINIMIZE:-10s}
go=${GO:-go}
fail=0

# bare_deadline OUTPUT: true when the only failure reported is the coordinator's deadline.
bare_deadline() {
  grep -q 'context deadline exceeded' <<<"$1" &&
    ! grep -Eq 'Failing input written|panic:|_test\.go:[0-9]+:' <<<"$1"
}

while IFS=: read -r file name; do
  pkg=./$(dirname "$file")
  for try in 1 2; do
    if out=$($go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" 2>&1); then
      echo "fuzz: $pkg $name ok ($fuzztime)"
      break
    fi
    if [ "$try" = 1 ] && bare_deadline "$out"; then
      echo "fuzz: $pkg $name: bare 'context deadline exceeded' with no failing input (go.dev/issue/75804); running it once more" >&2
      continue
    fi
    echo "$out" | grep -v '^fuzz: elapsed' >&2
    echo "fuzz: $pkg $name FAILED" >&2
    fail=1
    break
  done
done < <(grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' internal cmd 2>/dev/null | sed 's/:func /:/' | sort)
exit $fail
