#!/usr/bin/env bash
# Every suite, one after the other, then one line summing them all:
# "N passed, N failed, N skipped". Exits non-zero if anything failed.
#   php-tests/harness/test-all.sh path/to/ephpm.so
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# With --system NAME (run inside php-tests/systems/NAME by system-suites.sh) only that
# system's suites run, and each summary line is named NAME-suite.
# With --systems "A B" (make test-matrix) the suites of Debian 12 are left out and only
# those systems' run.
# A system's matrix_run (suites that make test-matrix adds) runs too with --matrix after
# --system, which system-suites.sh passes when EPHPM_MATRIX=1 (--systems sets it).
system=""; only_systems=""; matrix=""
[ "${1:-}" = --system ] && { system=$2; shift 2; }
[ "${1:-}" = --matrix ] && { matrix=1; shift; }
[ "${1:-}" = --systems ] && { only_systems=$2; export EPHPM_MATRIX=1; shift 2; }
so=$(realpath "$1")
summaries=$(mktemp); failures=$(mktemp)
trap 'rm -f "$summaries" "$failures"' EXIT
# record LABEL SUMMARY-FILTER: shows a suite's output as it comes (on stderr, through a
# pipe: `tee /dev/stderr` would reopen a redirected log and truncate it), adds its
# summary lines to $summaries and the name of every test that failed, under LABEL, to
# $failures: cargo's "test NAME ... FAILED", run-tests.php's "FAIL NAME", the shell
# suites' "FAIL - what".
record() {
    local label=$1 filter=$2 out
    out=$(mktemp)
    tee >(cat >&2) > "$out"
    "$filter" < "$out" >> "$summaries"
    { grep -E '^test .* \.\.\. FAILED$' "$out" | sed 's/^test //; s/ \.\.\. FAILED$//'
      grep -E '^(FAIL|BORK)[ -]' "$out"; } | sed "s|^|$label: |" >> "$failures"
    rm -f "$out"
}
shell_results() { grep -E '^[a-z0-9-]+: [0-9]+ passed, [0-9]+ failed' | sed "s/^/${system:+$system-}/"; }
# A system's summary lines are already named NAME-suite (its suites' own lines, which
# reach here too, are not: each counts once); its failures are under its name.
system_results() { grep -E "^$name-[a-z0-9-]+: [0-9]+ passed, [0-9]+ failed"; }

# run_suites SUITE...: each a script of this folder and its arguments after the .so.
run_suites() {
    local suite
    for suite in "$@"; do
        echo "== $suite"
        # shellcheck disable=SC2086 # "$suite" is a script and its arguments after the .so
        set -- $suite
        bash "$here/$1" "$so" "${@:2}" | record "${system:+$system: }$suite" shell_results
    done
}
if [ -n "$system" ]; then
    # shellcheck source=../systems/packages.conf
    . "$root/php-tests/systems/packages.conf"
    # shellcheck source=../systems/newest.conf
    . "$root/php-tests/systems/$system.conf"
    export EPHPM_SYSTEM=$system
    echo "== system $system: $(php -r 'echo "PHP ", PHP_VERSION;')"
    IFS=';' read -r -a listed <<< "$run${matrix:+${matrix_run:+;$matrix_run}}"
    run_suites "${listed[@]}"
    cat "$summaries"
    [ -s "$failures" ] && { echo "== failed"; cat "$failures"; }
    exit 0
fi

# cargo's per-binary "test result" lines, as summary lines.
cargo_results() {
    sed -n 's/^test result: [a-zA-Z]*\. \([0-9]*\) passed; \([0-9]*\) failed; \([0-9]*\) ignored.*/cargo: \1 passed, \2 failed, \3 skipped/p'
}
if [ -z "$only_systems" ]; then
# The engine is built with feature `node` (ephpm-node, which tests/cluster.rs starts):
# the same build for every cargo run below.
echo "== cargo test (the engine, without PHP)"
( cd "$root" && cargo test --release --no-fail-fast --no-default-features --features node 2>&1 ) | record "cargo test" cargo_results
# A fleet of nodes of two builds (tests/cluster_versions.rs) needs a build of its own,
# with feature fault-points (its nodes' versions are the fault point wire-versions):
# unoptimised and in its own target directory, so that it costs one quick build and
# never replaces the nodes above.
echo "== cargo test of a fleet of two builds"
( cd "$root" && cargo test --target-dir target/fault-points --no-default-features \
    --features node,fault-points --test cluster_versions 2>&1 ) | record "cargo test wire-versions" cargo_results
# The backend-generic engine tests again on a real redis-server, over its unix socket
# and its loopback port, on a Redis Cluster (three masters with a replica each), on the
# same over TLS only with a client certificate (rediss-cluster://), and on a 3-node
# gossip cluster. The three lock tests that move shm's clock by hand have
# counterparts with real TTLs in tests/redis.rs.
for backend in redis redis-tcp redis-cluster redis-cluster-tls cluster; do
    echo "== cargo test on $backend"
    ( cd "$root" && EPHPM_TEST_STORE=$backend cargo test --release --no-default-features --features node \
        --test locks --test memo --test stale --test session --test rwlock -- \
        --skip release_after_expiry --skip fences_increase --skip extend_by_token 2>&1 ) \
        | record "cargo test on $backend" cargo_results
done
# The lock suites once more on the gossip cluster with ?copies=async: a lock's owner
# answers before its replicas have their copies (tests/cluster_async_copies.rs shows
# what that gives up).
echo "== cargo test on cluster-async"
( cd "$root" && EPHPM_TEST_STORE=cluster-async cargo test --release --no-default-features --features node \
    --test locks --test memo --test session --test rwlock -- \
    --skip release_after_expiry --skip fences_increase --skip extend_by_token 2>&1 ) \
    | record "cargo test on cluster-async" cargo_results
run_suites "run-phpt.sh" "phpt-on-redis.sh" "phpt-on-redis-cluster.sh" "phpt-on-redis-cluster.sh tls" "phpt-on-cluster.sh" "fpm-suite.sh" "fpm-suite.sh redis" "fpm-suite.sh cluster" "fpm-pools.sh" "deploy-suite.sh" "laravel-suite.sh" "laravel-suite.sh redis" "symfony-suite.sh" "symfony-suite.sh redis" "symfony-cache-suite.sh" "symfony-cache-suite.sh redis" "user-suite.sh" "live-lock-suite.sh" "session-suite.sh" "profiler-suite.sh" "operator-suite.sh" "fuzz.sh" "wordpress-pages-suite.sh" "resp-suite.sh" "redis-tcl-suite.sh" "docs-suite.sh"
fi
# The newest stack (with --systems, those named): each built once in target/systems,
# the extension built for its PHP, its suites run in it.
for name in ${only_systems:-newest}; do
    echo "== system $name"
    bash "$here/system-suites.sh" "$name" 2>&1 | record "$name" system_results
done
echo "== summary"
cat "$summaries"
if [ -s "$failures" ]; then
    echo "== failed"
    cat "$failures"
fi
# Fewer summary lines than a run has suites means a suite died before its own line.
awk -F'[:,] *' -v least="$([ -n "$only_systems" ] && echo 2 || echo 4)" \
    '{ p += $2; f += $3; s += $4 } END { printf "%d passed, %d failed, %d skipped\n", p, f, s; exit (f > 0 || NR < least) }' \
    <(sed 's/ passed//; s/ failed//; s/ skipped//' "$summaries")
