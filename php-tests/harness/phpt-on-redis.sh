#!/usr/bin/env bash
# Runs the backend-generic .phpt tests again with ephpm.dsn on a real redis-server (its
# unix socket, in a private directory; stopped by pid), each test with its own key prefix,
# and prints one line: "phpt-redis: N passed, N failed, N skipped". With "valkey" the
# server is valkey-server, and the line "phpt-valkey: …".
#   php-tests/harness/phpt-on-redis.sh path/to/ephpm.so [valkey]
set -u
so=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
dir=$(mktemp -d)
trap 'kill "$(cat "$dir/redis.pid" 2>/dev/null)" 2>/dev/null; sleep 0.2; rm -rf "$dir"' EXIT
label=phpt-redis
if [ "${2:-}" = valkey ]; then
    export EPHPM_REDIS_SERVER=valkey-server; label=phpt-valkey
fi
start_redis "$dir"
# Which compare-and-delete the store found on this server (DELEX on Redis 8.4+,
# DELIFEQ on Valkey 9, Lua before), as php --ri says it.
echo "$label: $(php -n -d "extension=$so" -d "ephpm.dsn=unix://$dir/redis.sock" --ri ephpm | grep -o 'compare-and-delete by [^,]*')"
run_generic_phpts "$so" "$label" "unix://$dir/redis.sock?"
