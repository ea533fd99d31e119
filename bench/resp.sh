#!/usr/bin/env bash
# ephpm-resp against Debian's redis-server, side by side on loopback TCP, with
# redis-benchmark: SET, GET, INCR and MSET from 50 clients at pipeline depths 1 and 16,
# and one client's latency. The two servers take turns, ROUNDS times, and each figure is
# the median of its rounds, so that the machine's noise falls on both alike.
#   bash bench/resp.sh [ROUNDS] [REQUESTS]
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}; requests=${2:-200000}
tmp=$(mktemp -d)
store="bench_resp_$$"
port_e=$((20000 + RANDOM % 10000)); port_r=$((port_e + 1))
"$root/target/release/ephpm-resp" --store "$store" --shm-size 256M --no-socket \
    --tcp "127.0.0.1:$port_e" --allow-insecure-no-auth 2>"$tmp/resp.log" &
resp=$!
redis-server --bind 127.0.0.1 --port "$port_r" --save "" --appendonly no --daemonize yes \
    --pidfile "$tmp/redis.pid" --dir "$tmp" >/dev/null
cleanup() {
    kill "$resp" 2>/dev/null; kill "$(cat "$tmp/redis.pid" 2>/dev/null)" 2>/dev/null
    rm -rf "$tmp" "/dev/shm/ephpm-$(id -u)/$store"
}
trap cleanup EXIT
for p in $port_e $port_r; do
    for _ in $(seq 100); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.05; done
done
# run PORT ARGS… -> "TEST rps p50" lines (redis-benchmark's --csv).
run() {
    local port=$1; shift
    redis-benchmark -p "$port" --csv "$@" 2>/dev/null | tail -n +2 | tr -d '"' | awk -F, '{print $1, $2, $3}'
}
for round in $(seq "$rounds"); do
    for depth in 1 16; do
        for who in ephpm redis; do
            port=$port_e; [ $who = redis ] && port=$port_r
            run "$port" -t set,get,incr,mset -c 50 -n "$requests" -P "$depth" \
                | sed "s/^/$who P$depth /" >> "$tmp/results"
        done
    done
    for who in ephpm redis; do
        port=$port_e; [ $who = redis ] && port=$port_r
        run "$port" -t set,get -c 1 -n $((requests / 10)) | sed "s/^/$who c1 /" >> "$tmp/results"
    done
done
# The median of each figure over the rounds, and ephpm's ratio to Redis.
printf '| test | depth | ephpm-resp ops/s | redis-server ops/s | ratio | ephpm p50 ms | redis p50 ms |\n|---|---|---|---|---|---|---|\n'
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for depth in P1 P16 c1; do
    for test in SET GET INCR "MSET"; do
        key="$test"; [ "$test" = MSET ] && key="MSET (10 keys)"
        e=$(grep "^ephpm $depth $key " "$tmp/results" | awk '{print $(NF-1)}' | median)
        r=$(grep "^redis $depth $key " "$tmp/results" | awk '{print $(NF-1)}' | median)
        [ -z "$e" ] && continue
        ep=$(grep "^ephpm $depth $key " "$tmp/results" | awk '{print $NF}' | median)
        rp=$(grep "^redis $depth $key " "$tmp/results" | awk '{print $NF}' | median)
        printf '| %s | %s | %.0f | %.0f | %.2f | %s | %s |\n' "$test" "$depth" "$e" "$r" "$(echo "$e / $r" | bc -l)" "$ep" "$rp"
    done
done
