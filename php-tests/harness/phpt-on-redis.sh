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
# The compare-and-delete and -extend the store must find on this server, by its version:
# DELEX on Redis 8.4 and later, DELIFEQ on Valkey 9 and later, Lua before; SET IFEQ on
# Redis 8.4 and Valkey 8.1 and later, Lua before; php --ri says which.
server_version=$("${EPHPM_REDIS_SERVER:-redis-server}" --version | sed -n 's/.* v=\([0-9]*\.[0-9]*\).*/\1/p')
at_least() { [ "$(printf '%s\n' "$1" "$2" | sort -V | head -n 1)" = "$2" ]; }
case ${EPHPM_REDIS_SERVER:-redis-server} in
    redis-server) at_least "$server_version" 8.4 && native="DELEX IFEQ" || native=Lua
                  at_least "$server_version" 8.4 && extend="SET IFEQ" || extend=Lua ;;
    valkey-server) at_least "$server_version" 9.0 && native=DELIFEQ || native=Lua
                   at_least "$server_version" 8.1 && extend="SET IFEQ" || extend=Lua ;;
esac
passed=0 failed=0 skipped=0
said=$(php -n -d "extension=$so" -d "ephpm.dsn=unix://$dir/redis.sock" --ri ephpm)
check "on ${EPHPM_REDIS_SERVER:-redis-server} $server_version php --ri says compare-and-delete by $native" "compare-and-delete by $native" \
    "$(grep -o 'compare-and-delete by [^,(]*' <<<"$said" | sed 's/ *$//')"
check "on ${EPHPM_REDIS_SERVER:-redis-server} $server_version php --ri says compare-and-extend by $extend" "compare-and-extend by $extend" \
    "$(grep -o 'compare-and-extend by [^,(]*' <<<"$said" | sed 's/ *$//')"
summary "$label-native"
run_generic_phpts "$so" "$label" "unix://$dir/redis.sock?"
