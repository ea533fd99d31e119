#!/usr/bin/env bash
# The fuzzer: every public entry point of the extension (found by Reflection) called
# with binary, empty and huge strings, extreme ints and floats, wrong types and
# reentrant closures, for about 60 seconds in 4 rounds, each a child `php -n` on a
# private shm store (the third with ephpm.dsn on a Redis port nobody listens on, so that
# every store-failure path runs). A round passes when the child exits 0 (no signal, no
# fatal error), prints no "internal error (a bug)" (a Rust panic caught at the boundary)
# nor a panic message, and every binary key and value round-tripped exactly.
#   php-tests/harness/fuzz.sh path/to/ephpm.so
# FUZZ_SEED=N reruns a printed seed; FUZZ_SECONDS=N changes the length of a round;
# FUZZ_TRACE=1 makes fuzz.php name each call on stderr (to find a call that hangs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
so=$(realpath "$1")
seed=${FUZZ_SEED:-$(date +%s)}
seconds=${FUZZ_SECONDS:-14}
out=$(mktemp -d)
store="fuzz_$$"
trap 'rm -rf "$out" /dev/shm/ephpm-"$(id -u)"*/"$store"_* /dev/shm/ephpm."$(id -u)"."$store"_*' EXIT
echo "fuzz: seed $seed (rerun with FUZZ_SEED=$seed), $seconds s per round"
for round in 1 2 3 4; do
    s=$((seed + round - 1))
    dsn=shm://
    [ "$round" = 3 ] && dsn="redis://127.0.0.1:1?timeout=0.2"
    timeout $((seconds + 60)) php -n -d "extension=$so" -d "ephpm.store_name=${store}_$round" \
        -d ephpm.shm_size=32M -d ephpm.session.lock_wait=0.05 -d "ephpm.dsn=\"$dsn\"" \
        "$here/fuzz.php" "$s" "$seconds" >"$out/$round" 2>&1
    rc=$?
    what="round $round (seed $s, ephpm.dsn $dsn)"
    check "$what: the child exits 0 (no signal, no fatal error, no hang)" 0 "$rc"
    check "$what: no internal error or Rust panic" 0 "$(grep -c -E 'internal error \(a bug|panicked at|^BUG' "$out/$round")"
    check "$what: no fatal error" 0 "$(grep -c -E 'Fatal error|Hard memory limit' "$out/$round")"
    check "$what: binary keys and values round-trip exactly" 0 "$(grep -c '^ROUNDTRIP FAIL' "$out/$round")"
    check "$what: ran to its end" 1 "$(grep -c '^fuzz-done' "$out/$round")"
    grep '^fuzz-done' "$out/$round"
    grep -m 20 -E 'BUG|panicked|ROUNDTRIP|Fatal|Hard memory' "$out/$round"
done
summary fuzz
