#!/usr/bin/env bash
# Prints one closing line for a Maven test run (Maven -q prints nothing when all pass):
#   <label>: N passed, N failed, N skipped
# summed over the Surefire XML reports under the given directories.
set -euo pipefail
label=$1; shift
tests=0; failed=0; skipped=0
while IFS= read -r f; do
  line=$(grep -m1 -o '<testsuite [^>]*>' "$f" || true)
  get() { sed -n "s/.* $1=\"\([0-9]*\)\".*/\1/p" <<<"$line"; }
  t=$(get tests); fl=$(get failures); e=$(get errors); s=$(get skipped)
  tests=$((tests + ${t:-0})); failed=$((failed + ${fl:-0} + ${e:-0})); skipped=$((skipped + ${s:-0}))
done < <(find "$@" -path '*/target/surefire-reports/TEST-*.xml' 2>/dev/null)
if [ "$tests" -eq 0 ]; then echo "$label: no tests ran" >&2; exit 1; fi
echo "$label: $((tests - failed - skipped)) passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
