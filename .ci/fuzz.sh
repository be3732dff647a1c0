#!/usr/bin/env bash
# Run every fuzz target of the module for FUZZTIME (default 10s), one at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-10s}"
# Each target's output goes to bin/fuzz/<package>.<target>.log, inside the
# build tree (bin/ is ignored by git and removed by `make clean`), so two
# checkouts fuzzing at once never share a log.
LOGDIR="${FUZZ_LOGDIR:-bin/fuzz}"
mkdir -p "$LOGDIR"
fail=0
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u || true)
  for t in $targets; do
    echo "fuzz: $pkg $t ($FUZZTIME)"
    log="$LOGDIR/$(echo "${pkg#github.com/mcpwire/mcpwire/}" | tr / .).$t.log"
    ok=0
    for attempt in 1 2; do
      if go test -run='^$' -fuzz="^${t}\$" -fuzztime="$FUZZTIME" "$pkg" > "$log" 2>&1; then
        ok=1; break
      fi
      # The fuzzing engine itself can miss its own deadline on a loaded
      # machine ("context deadline exceeded", no failing input): run the
      # target once more. A real failure writes its input and is not retried.
      if grep -q 'Failing input written' "$log" || ! grep -q 'context deadline exceeded' "$log"; then
        break
      fi
      echo "fuzz: $t: the fuzzing engine missed its deadline (no failing input); once more"
    done
    if [ $ok -eq 0 ]; then
      cat "$log"
      echo "fuzz: $t FAILED (a crasher, if any, is under $dir/testdata/fuzz/$t/)"
      fail=1
    fi
  done
done
exit $fail
