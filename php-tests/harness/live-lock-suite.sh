#!/usr/bin/env bash
# A live shard-lock holder is never taken for a dead one, and a stopped process holds up
# nothing but the writers of the shard it holds (ARCHITECTURE.md §5, "dead only on
# evidence"). Under php-fpm's real privileges: a root master, a pool of another user,
# whose workers switched user without exec and so are not dumpable — their own user's
# other processes cannot read their /proc/PID/maps.
#
# 1. A php-fpm worker writing 256 KiB values is stopped (SIGSTOP) until it is stopped
#    inside a shard lock, outside the few instructions that link its entry in (there,
#    `read_seq` is odd and the shard's readers must wait too: stats()'s shards_writing,
#    SAFETY.md). A CLI writer of the pool's user to that shard must not get in
#    while the worker lives: it fails after the bound with the worker's pid in the error,
#    and no repair happens. Reads of every key and stats() answer meanwhile. Resumed, the
#    worker finishes its loop without a signal.
# 2. A CLI reader of a 1 MiB value is stopped at random moments, 5 times: stats(), reads
#    and writes of other keys answer each time.
# 3. A root PHP script that posix_setuid()s to the pool user (not dumpable, as a worker)
#    walks a store of many keys with Ephpm\KvIterator beside a writer, 20 runs: no
#    crash, no repair.
# With the old rule (the fault point `unreadable-is-dead`: an unreadable maps file meant a
# dead holder) parts 1 and 3 fail: the writer gets in after 200 ms, repairs=1, and the
# worker dies with SIGSEGV when resumed; with stats() and large reads under shard locks
# (before this suite), part 2 fails with "held by process".
#   php-tests/harness/live-lock-suite.sh path/to/ephpm.so
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
find_fpm live-lock
if [ "$(id -u)" != 0 ]; then
    skip "needs root to run php-fpm's master as root and its pool as another user"; summary live-lock; exit 0
fi
pool_user=ephpm-test-pool
id "$pool_user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$pool_user"
puid=$(id -u "$pool_user")
tmp=$(mktemp -d); chmod 755 "$tmp"
cp "$1" "$tmp/ephpm.so"; chmod 644 "$tmp/ephpm.so"
install -d -m 0700 -o "$pool_user" "$tmp/run"
store="livelock_$$"
master=""
cleanup() {
    [ -n "$master" ] && { kill -CONT $(pgrep -u "$pool_user") 2>/dev/null; kill -QUIT "$master" 2>/dev/null; wait "$master" 2>/dev/null; }
    pkill -KILL -u "$pool_user" 2>/dev/null
    rm -rf "$tmp" /dev/shm/ephpm-"$puid"
    userdel "$pool_user" 2>/dev/null
}
trap cleanup EXIT
ini=(-d "extension=$tmp/ephpm.so" -d "ephpm.store_name=$store" -d ephpm.shm_size=256M)
php_as_pool() { # php_as_pool CODE: a CLI process of the pool's user on the pool's store
    runuser -u "$pool_user" -- php -n "${ini[@]}" -r "$1" 2>&1
}
stats_field() { php_as_pool "echo (new Ephpm\Kv())->stats()['$1'];"; }
held_not_writing() { php_as_pool '$s = (new Ephpm\Kv())->stats(); echo $s["shards_locked"], "/", $s["shards_writing"];'; }

cat > "$tmp/fpm.conf" <<CONF
[global]
pid = $tmp/fpm.pid
error_log = $tmp/fpm.log
daemonize = no
[w]
user = $pool_user
group = $pool_user
listen = $tmp/w.sock
pm = static
pm.max_children = 2
request_terminate_timeout = 0
php_admin_value[ephpm.store_name] = $store
php_admin_value[ephpm.shm_size] = 256M
CONF
cat > "$tmp/app.php" <<'PHP'
<?php
// Writes 256 KiB values to 64 keys until told to stop (a file), then says how many.
$run = $_GET['run'];
$kv = new Ephpm\Kv();
$blob = str_repeat('w', 256 * 1024);
$end = microtime(true) + 120;
for ($i = 0; !file_exists("$run/stop") && microtime(true) < $end; $i++) {
    $kv->set('k' . ($i % 64), $blob);
    if ($i === 64) {
        file_put_contents("$run/worker.pid", getmypid()); // every key written once
    }
}
echo "done ", $i > 0 ? "yes" : "no";
PHP
"$(fpm_binary)" -n -d "extension=$tmp/ephpm.so" -y "$tmp/fpm.conf" -F &
master=$!
for _ in $(seq 100); do [ -S "$tmp/w.sock" ] && break; sleep 0.05; done

# 1. The worker stopped inside a shard lock.
SCRIPT_FILENAME="$tmp/app.php" SCRIPT_NAME=/app.php REQUEST_METHOD=GET QUERY_STRING="run=$tmp/run" \
    cgi-fcgi -bind -connect "$tmp/w.sock" > "$tmp/response" 2>/dev/null &
request=$!
for _ in $(seq 200); do [ -s "$tmp/run/worker.pid" ] && break; sleep 0.05; done
worker=$(cat "$tmp/run/worker.pid")
inside=no
for _ in $(seq 300); do
    kill -STOP "$worker"
    sleep 0.02
    if [ "$(held_not_writing)" = 1/0 ]; then inside=yes; break; fi
    kill -CONT "$worker"; sleep 0.01
done
check "the worker was stopped inside a shard lock, not mid-change" yes "$inside"
check "the worker is not dumpable: its maps are not readable by its own user" denied \
    "$(runuser -u "$pool_user" -- cat /proc/"$worker"/maps >/dev/null 2>&1 && echo readable || echo denied)"
out=$(php_as_pool '$kv = new Ephpm\Kv(); $read = 0;
    for ($i = 0; $i < 64; $i++) { $read += is_string($kv->get("k$i")); }
    echo "read $read; ";
    try { for ($i = 0; $i < 64; $i++) { $kv->set("k$i", "cli"); } echo "all written"; }
    catch (Ephpm\StoreException $e) { echo "refused: ", $e->getMessage(); }')
check "meanwhile every key reads without waiting on it" "read 64" "${out%%;*}"
check "a writer of its shard does not get in while it lives: it fails naming the worker" yes \
    "$(echo "$out" | grep -q "refused: .*held by process $worker" && echo yes || echo "$out")"
check "no repair happened under the live holder" 0 "$(stats_field repairs)"
kill -CONT "$worker"
touch "$tmp/run/stop"
wait "$request"
check "resumed, the worker finishes its request" "done yes" "$(sed '1,/^\r\{0,1\}$/d' "$tmp/response")"
check "no worker died on a signal" "" "$(grep -i 'signal' "$tmp/fpm.log")"

# 2. A stopped reader of a 1 MiB value holds nobody up.
php_as_pool '(new Ephpm\Kv())->set("big", str_repeat("b", 1 << 20));' >/dev/null
runuser -u "$pool_user" -- php -n "${ini[@]}" -r '$kv = new Ephpm\Kv(); $end = microtime(true) + 60;
    while (!file_exists($argv[1]) && microtime(true) < $end) { $kv->get("big"); }' "$tmp/run/reader.stop" &
reader=$!
answered=0
for _ in 1 2 3 4 5; do
    sleep 0.0$((RANDOM % 9 + 1))
    kill -STOP "$reader"; sleep 0.02
    out=$(php_as_pool '$kv = new Ephpm\Kv();
        try { $kv->stats(); for ($i = 0; $i < 64; $i++) { $kv->set("r$i", $i); $kv->get("r$i"); } echo "answered"; }
        catch (Ephpm\StoreException $e) { echo $e->getMessage(); }')
    [ "$out" = answered ] && answered=$((answered + 1)) || echo "# $out"
    kill -CONT "$reader"
done
touch "$tmp/run/reader.stop"; wait "$reader"
check "a reader of 1 MiB stopped 5 times: stats(), reads and writes answered each time" 5 "$answered"

# 3. A setuid walker (not dumpable) beside a writer, 20 runs.
php_as_pool '$kv = new Ephpm\Kv(); for ($b = 0; $b < 400; $b++) { $m = [];
    for ($i = 0; $i < 2500; $i++) { $m["walk:" . ($b * 2500 + $i)] = $i; } $kv->setMany($m); }' >/dev/null
crashes=0
for _ in $(seq 20); do
    runuser -u "$pool_user" -- php -n "${ini[@]}" -r '$kv = new Ephpm\Kv();
        for ($i = 0; !file_exists($argv[1]); $i++) { $kv->set("walk:" . ($i % 1000000), $i); }' "$tmp/run/writer.stop" &
    writer=$!
    php -n -d extension=posix "${ini[@]}" -r 'posix_setgid($argv[1]); posix_setuid($argv[1]);
        $n = 0; foreach (new Ephpm\KvIterator(new Ephpm\Kv(), "walk:") as $k => $meta) { $n++; } echo $n > 0 ? "walked" : "empty";' "$puid" > "$tmp/walk.out" 2>&1
    status=$?
    touch "$tmp/run/writer.stop"; wait "$writer"; rm -f "$tmp/run/writer.stop"
    [ "$status" = 0 ] && [ "$(cat "$tmp/walk.out")" = walked ] || { crashes=$((crashes + 1)); echo "# walk: status $status, $(head -c 300 "$tmp/walk.out")"; }
done
check "20 walks of 1M keys by a setuid process beside a writer: no crash" 0 "$crashes"
check "... and no repair" 0 "$(stats_field repairs)"
summary live-lock
