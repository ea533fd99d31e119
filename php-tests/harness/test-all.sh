#!/usr/bin/env bash
# Every suite, one after the other, then one line summing them all:
# "N passed, N failed, N skipped". Exits non-zero if anything failed.
#   php-tests/harness/test-all.sh path/to/ephpm.so
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
so=$(realpath "$1")
summaries=$(mktemp)
trap 'rm -f "$summaries"' EXIT

echo "== cargo test (the engine, without PHP)"
( cd "$root" && cargo test --release --no-default-features 2>&1 ) | tee /dev/stderr \
    | sed -n 's/^test result: [a-zA-Z]*\. \([0-9]*\) passed; \([0-9]*\) failed; \([0-9]*\) ignored.*/cargo: \1 passed, \2 failed, \3 skipped/p' \
    >> "$summaries"
for suite in "run-phpt.sh" "fpm-suite.sh" "user-suite.sh"; do
    echo "== $suite"
    bash "$here/$suite" "$so" | tee /dev/stderr | grep -E '^[a-z]+: [0-9]+ passed, [0-9]+ failed' >> "$summaries"
done
echo "== summary"
cat "$summaries"
awk -F'[:,] *' '{ p += $2; f += $3; s += $4 } END { printf "%d passed, %d failed, %d skipped\n", p, f, s; exit (f > 0 || NR < 4) }' \
    <(sed 's/ passed//; s/ failed//; s/ skipped//' "$summaries")
