#!/usr/bin/env bash
# Real php-fpm (4 static workers on a unix socket in a temporary folder) driven with
# cgi-fcgi: every worker and the CLI share one store.
#   php-tests/harness/fpm-suite.sh path/to/ephpm.so [shm|redis|cluster]
# With "redis" the store is a redis-server this script starts on a unix socket in the
# same folder (and stops by pid), and the summary line is "fpm-redis: ...". With
# "cluster" it is cluster:// with ephpm.cluster.enabled=1: the FPM workers (and the CLI)
# run the host's node themselves, one of them holding its lease ("fpm-cluster: ...").
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
so=$(realpath "$1")
backend=${2:-shm}
label=fpm; [ "$backend" != shm ] && label=fpm-$backend
find_fpm "$label"
tmp=$(mktemp -d)
store="fpmtest_$$"
ini=(-n -d "extension=$so" -d "ephpm.store_name=$store" -d ephpm.shm_size=4M)
if [ "$backend" = redis ]; then
    start_redis "$tmp"
    ini+=(-d "ephpm.dsn=unix://$tmp/redis.sock")
fi
if [ "$backend" = cluster ]; then
    ini+=(-d "ephpm.dsn=cluster://" -d ephpm.cluster.enabled=1 -d ephpm.cluster.secret=ZnBtLXN1aXRlLWNsdXN0ZXItc2VjcmV0LTEyOA
          -d "ephpm.cluster.gossip_addr=127.0.0.1:$((20000 + RANDOM % 20000))" -d ephpm.cluster.node_id=fpm)
fi
cat > "$tmp/fpm.conf" <<CONF
[global]
pid = $tmp/fpm.pid
error_log = $tmp/fpm.log
daemonize = no
[app]
user = $(id -un)
group = $(id -gn)
listen = $tmp/fpm.sock
pm = static
pm.max_children = 4
CONF
"$fpm" "${ini[@]}" -y "$tmp/fpm.conf" -R -F &
master=$!
cleanup() {
    kill -QUIT "$master" 2>/dev/null; wait "$master" 2>/dev/null
    [ -f "$tmp/redis.pid" ] && kill "$(cat "$tmp/redis.pid")" 2>/dev/null && sleep 0.1
    rm -rf "$tmp" "/dev/shm/ephpm-$(id -u)/$store" "/dev/shm/ephpm-$(id -u)/$store".cluster*
}
trap cleanup EXIT
for _ in $(seq 100); do [ -S "$tmp/fpm.sock" ] && break; sleep 0.05; done

request() { # request QUERY_STRING -> body
    SCRIPT_FILENAME="$here/fpm-app.php" SCRIPT_NAME=/fpm-app.php REQUEST_METHOD=GET \
        QUERY_STRING="$1" cgi-fcgi -bind -connect "$tmp/fpm.sock" 2>/dev/null | sed '1,/^\r\{0,1\}$/d'
}
cli() { php "${ini[@]}" -r "$1"; }

# 200 requests from 8 concurrent clients increment one counter.
for c in $(seq 8); do
    ( for _ in $(seq 25); do request "op=incr" >/dev/null; done ) &
done
wait $(jobs -p | grep -v "^$master\$") 2>/dev/null
check "200 concurrent FPM requests increment one counter to exactly 200" 200 \
    "$(cli 'echo (new Ephpm\Kv())->get("fpm:counter");')"
pids=$(for _ in $(seq 40); do request "op=pid"; echo; done | sort -u | grep -c .)
check "the requests were served by more than one worker" yes "$([ "$pids" -gt 1 ] && echo yes || echo "no ($pids)")"

request "op=set&key=from_fpm&value=written-by-fpm" >/dev/null
check "a value written by an FPM request is read by a CLI script" "'written-by-fpm'" \
    "$(cli 'echo var_export((new Ephpm\Kv())->get("from_fpm"), true);')"
cli '(new Ephpm\Kv())->set("from_cli", "written-by-cli");'
check "a value written by a CLI script is read by an FPM request" "'written-by-cli'" \
    "$(request "op=get&key=from_cli")"
# StaleCache under FPM: the refresh runs after fastcgi_finish_request(), so the client has
# its response while the refresh still waits for the client's word.
cli '$c = new Ephpm\StaleCache(new Ephpm\Kv(), 60); $c->get("swr:hot", function (&$ttl) { $ttl = 0.1; return "old"; }); usleep(200000);'
check "a stale key is served at once by an FPM request" old "$(request "op=swr")"
cli '(new Ephpm\Kv())->set("swr:client has the response", 1);'
cli '$kv = new Ephpm\Kv(); $t = microtime(true) + 15; while (!$kv->has("swr:refresh saw") && microtime(true) < $t) usleep(1000);'
check "the refresh ran after the client had the response" "the client had the response" \
    "$(cli 'echo (new Ephpm\Kv())->get("swr:refresh saw");')"
check "the refreshed value is served next" "new" "$(request "op=swr")"
# Sessions: 50 concurrent requests on one session, each reading a counter, holding the
# session 10 ms and writing counter + 1. Locked, none is lost; unlocked, updates are lost
# (which shows the test can fail).
session_race() { # session_race SID LOCKING -> the counter after 50 requests
    for _ in $(seq 50); do request "op=session&sid=$1&locking=$2" >/dev/null & done
    wait $(jobs -p | grep -v "^$master\$") 2>/dev/null
    request "op=session&sid=$1" # one more, locked, to read the count
}
check "50 concurrent requests on one locked session count to exactly 50 (the 51st request reads it)" 51 "$(session_race race-locked 1)"
unlocked=$(session_race race-unlocked 0)
check "with ephpm.session.locking=0 the same run loses updates" yes \
    "$([ "$unlocked" -lt 51 ] && echo yes || echo "no ($unlocked)")"
# A request that exits, and one that dies of a fatal error, hold the session: the next
# request (waiting at most 5 s, then failing) still gets it, long before the 30 s TTL.
request "op=session&sid=ends-early&then=exit" >/dev/null
check "a request that called exit() released the session lock" 2 \
    "$(request "op=session&sid=ends-early&wait=5&timeout=fail")"
request "op=session&sid=ends-early&then=fatal" >/dev/null
check "a request that died of a fatal error released the session lock" 4 \
    "$(request "op=session&sid=ends-early&wait=5&timeout=fail")"
# A visitor flood logs nobody out (shm's eviction order; Redis has its own policy): 200
# users log in, the CLI fills the rest of the store with cache entries, then 3,000 new
# visitors (strict mode, no cookie: a new id each, left empty) come from 8 clients. Every
# user still has the session; only cache entries and the visitors' own entries went.
if [ "$backend" = shm ]; then
    users=$(for _ in $(seq 200); do request "op=login"; echo; done)
    cli '$kv = new Ephpm\Kv(); for ($i = 0; $kv->stats()["evictions"] === 0; $i++) $kv->set("fill:$i", str_repeat("f", 500));'
    for c in $(seq 8); do
        ( for _ in $(seq 375); do request "op=visit" >/dev/null; done ) &
    done
    wait $(jobs -p | grep -v "^$master\$") 2>/dev/null
    kept=$(for id in $users; do request "op=whoami&sid=$id"; echo; done | grep -c '^user-')
    check "200 logged-in users keep their sessions through 3,000 new visitors on a full store" 200 "$kept"
    check "the flood evicted new visitors' entries, never a session" "yes 0" \
        "$(cli '$s = (new Ephpm\Kv())->stats(); echo ($s["evictions_anonymous"] > 0 ? "yes" : "no"), " ", $s["evictions_session"];')"
fi
summary "$label"
