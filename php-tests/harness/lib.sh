# Helpers shared by the shell suites: counting checks and the summary line.
passed=0; failed=0; skipped=0
check() { # check "what it shows" expected actual
    if [ "$2" = "$3" ]; then passed=$((passed + 1)); echo "ok - $1"
    else failed=$((failed + 1)); echo "FAIL - $1: expected [$2], got [$3]"; fi
}
skip() { skipped=$((skipped + 1)); echo "skip - $1"; }
summary() { echo "$1: $passed passed, $failed failed, $skipped skipped"; }
# start_redis DIR: a redis-server on the unix socket DIR/redis.sock (mode 0700, no TCP
# port, no persistence), its pid in DIR/redis.pid; returns once the socket is there.
start_redis() {
    redis-server --port 0 --unixsocket "$1/redis.sock" --unixsocketperm 700 --save "" \
        --appendonly no --dir "$1" --daemonize yes --pidfile "$1/redis.pid" >/dev/null
    for _ in $(seq 100); do [ -S "$1/redis.sock" ] && break; sleep 0.05; done
}
