#!/usr/bin/env bash
# The backend-generic engine suites (locks, memo, stale, session, rwlock), as test-all.sh
# runs them on Debian 12's Redis 7.0, on this system's redis-server, or with "valkey" on
# its valkey-server: run inside a system of php-tests/systems (test-all.sh --system
# exports EPHPM_SYSTEM), built in target/systems/NAME/cargo-tests and kept there.
# Prints cargo's lines and "cargo-redis: N passed, N failed, N skipped" (cargo-valkey).
#   php-tests/harness/cargo-redis-suite.sh SO [valkey]   (SO: ignored, as test-all.sh passes it)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
server=redis-server label=cargo-redis
[ "${2:-}" = valkey ] && { server=valkey-server; label=cargo-valkey; }
[ -n "${EPHPM_SYSTEM:-}" ] || { echo "FAIL - $label: run it inside a system (test-all.sh --system NAME)"; echo "$label: 0 passed, 1 failed, 0 skipped"; exit 1; }
echo "# on $("$server" --version)"
out=$(mktemp)
# The same tests and skips as test-all.sh's "cargo test on redis" (the three lock tests
# that move shm's clock by hand have real-TTL counterparts in tests/redis.rs).
(cd "$root" && EPHPM_TEST_STORE=redis EPHPM_REDIS_SERVER=$server cargo test --release --no-fail-fast \
    --target-dir "$root/target/systems/$EPHPM_SYSTEM/cargo-tests" --no-default-features --features node \
    --test locks --test memo --test stale --test session --test rwlock -- \
    --skip release_after_expiry --skip fences_increase --skip extend_by_token 2>&1) | tee "$out"
sed -n 's/^test result: [a-zA-Z]*\. \([0-9]*\) passed; \([0-9]*\) failed; \([0-9]*\) ignored.*/\1 \2 \3/p' "$out" \
    | awk -v l="$label" '{ p += $1; f += $2; s += $3; n++ }
        END { if (n < 5) { f += 1; printf "FAIL - %s: %d of the 5 test binaries reported (a build error?)\n", l, n }
              printf "%s: %d passed, %d failed, %d skipped\n", l, p, f, s }'
rm -f "$out"
