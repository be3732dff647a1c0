#!/usr/bin/env bash
# Run every fuzz target of the module for FUZZTIME (default 10s), one at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-10s}"
fail=0
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u || true)
  for t in $targets; do
    echo "fuzz: $pkg $t ($FUZZTIME)"
    if ! go test -run='^$' -fuzz="^${t}\$" -fuzztime="$FUZZTIME" "$pkg" > /tmp/fuzz-$t.log 2>&1; then
      cat /tmp/fuzz-$t.log
      echo "fuzz: $t FAILED (a crasher, if any, is under $dir/testdata/fuzz/$t/)"
      fail=1
    fi
  done
done
exit $fail
