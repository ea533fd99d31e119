#!/usr/bin/env bash
# Runs the backend-generic .phpt tests again with ephpm.dsn on a real redis-server (its
# unix socket, in a private directory; stopped by pid), each test with its own key prefix,
# and prints one line: "phpt-redis: N passed, N failed, N skipped".
#   php-tests/harness/phpt-on-redis.sh path/to/ephpm.so
set -u
so=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
dir=$(mktemp -d)
trap 'kill "$(cat "$dir/redis.pid" 2>/dev/null)" 2>/dev/null; sleep 0.2; rm -rf "$dir"' EXIT
start_redis "$dir"
run_generic_phpts "$so" phpt-redis "unix://$dir/redis.sock?"
