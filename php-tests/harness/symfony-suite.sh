#!/usr/bin/env bash
# A real Symfony 5.4 application (php-tests/symfony-app: MicroKernelTrait, Debian's
# FrameworkBundle, config in YAML) with Ephpm\Symfony\EphpmBundle, served by real php-fpm
# (12 static workers on a unix socket in a temporary folder) driven with cgi-fcgi; then
# its ephpm:* console commands, run as root and as www-data against www-data's store.
#   php-tests/harness/symfony-suite.sh path/to/ephpm.so [shm|redis]
# With "redis" the application's store "host" (its pools, locks and sessions) is a
# redis-server this script starts on a unix socket in the same folder (and stops by pid);
# the summary line is "symfony-redis: ...". Counters and markers stay in the shm store.
# Environment "test" has ephpm's protections on; "off" (config/packages/off/) switches
# stampede protection, session locking and the lock.factory wiring off, and is each
# check's counter-proof; "dsn" (config/packages/dsn/) gives the same stores as Symfony
# takes DSNs, ephpm://host from env vars.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
backend=${2:-shm}
label=symfony; [ "$backend" != shm ] && label=symfony-$backend
find_fpm "$label"
if [ ! -f /usr/share/php/Symfony/Bundle/FrameworkBundle/autoload.php ] || [ ! -f /usr/share/php/Symfony/Component/Lock/autoload.php ]; then
    skip "Debian's php-symfony-framework-bundle and php-symfony-lock are not installed"; summary "$label"; exit 0
fi
app=$(cd "$here/../symfony-app" && pwd)
tmp=$(mktemp -d); chmod 755 "$tmp"
cp "$1" "$tmp/ephpm.so"; chmod 644 "$tmp/ephpm.so"
store="symfonytest_$$"
ini=(-n -d "extension=$tmp/ephpm.so" -d "ephpm.store_name=$store" -d ephpm.shm_size=16M -d extension=posix
     -d extension=mbstring -d extension=ctype -d extension=intl -d extension=tokenizer -d display_errors=stderr
     "${opcache[@]}")
export SYMFONY_VAR_DIR="$tmp/var" COLUMNS=400 EPHPM_HOST_DSN="shm://"
export LOCK_DSN=ephpm://host SESSION_DSN=ephpm://host CACHE_DSN=ephpm://host
if [ "$backend" = redis ]; then
    start_redis "$tmp"
    # www-data's console commands reach it as php-fpm's workers would: through its group.
    chgrp "$(id -gn www-data)" "$tmp/redis.sock"; chmod 770 "$tmp/redis.sock"
    EPHPM_HOST_DSN="unix://$tmp/redis.sock"
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
pm.max_children = 12
clear_env = no
CONF
web=www-data; wuid=$(id -u "$web")
cleanup() {
    kill -QUIT "$master" 2>/dev/null; wait "$master" 2>/dev/null
    [ -f "$tmp/holder.pid" ] && kill "$(cat "$tmp/holder.pid")" 2>/dev/null
    [ -f "$tmp/redis.pid" ] && kill "$(cat "$tmp/redis.pid")" 2>/dev/null && sleep 0.1
    rm -rf "$tmp" "/dev/shm/ephpm-$(id -u)/$store" "/dev/shm/ephpm-$wuid/$store"
}
trap cleanup EXIT
console() { APP_ENV=${env:-test} php "${ini[@]}" "$app/bin/console" "$@" 2>&1; }
# Both environments' containers are built once, before the requests race.
env=test console cache:warmup >/dev/null; env=off console cache:warmup >/dev/null; env=dsn console cache:warmup >/dev/null
"$fpm" "${ini[@]}" -y "$tmp/fpm.conf" -R -F &
master=$!
for _ in $(seq 100); do [ -S "$tmp/fpm.sock" ] && break; sleep 0.05; done

request() { # request PATH?QUERY [COOKIE] [ENV] -> body
    local query=""
    case "$1" in *\?*) query=${1#*\?} ;; esac
    SCRIPT_FILENAME="$app/public/index.php" SCRIPT_NAME=/index.php REQUEST_METHOD=GET REQUEST_URI="$1" \
        QUERY_STRING="$query" HTTP_HOST=localhost SERVER_NAME=localhost SERVER_PORT=80 HTTP_COOKIE="${2:-}" \
        APP_ENV="${3:-test}" cgi-fcgi -bind -connect "$tmp/fpm.sock" 2>/dev/null | sed '1,/^\r\{0,1\}$/d' | head -c 300
}
burst() { # burst N PATH?QUERY [COOKIE] [ENV] -> the N bodies, one a line, sorted
    local i
    for i in $(seq "$1"); do request "$2" "${3:-}" "${4:-test}" >"$tmp/body.$i" & done
    wait $(jobs -p | grep -v "^$master\$") 2>/dev/null
    for i in $(seq "$1"); do cat "$tmp/body.$i"; echo; done | sort
}
probe() { php "${ini[@]}" -r 'echo json_encode((new Ephpm\Kv(null, "test:"))->get($argv[1]));' "$1"; }
mark() { php "${ini[@]}" -r '(new Ephpm\Kv(null, "test:"))->set($argv[1], 1);' "$1"; }
await() { # await KEY: until the marker exists, 20 s at most
    php "${ini[@]}" -r '(new Ephpm\Kv(null, "test:"))->wait($argv[1], 0, 20);' "$1"
}
count() { grep -cxF -- "$1" <<<"$2"; }
has() { grep -qF -- "$1" <<<"$2" && echo yes || echo no; }

# 1. A cold key, 12 concurrent requests, a 300 ms computation.
bodies=$(burst 12 "/cold?pool=a&key=cold&ms=300")
check "12 concurrent requests on a cold key of an ephpm pool all get the value" 12 "$(count "computed by pool a" "$bodies")"
check "... computed once (MemoLock from the bundle)" 1 "$(probe origin:a:cold)"
bodies=$(burst 12 "/cold?pool=a&key=cold-off&ms=1500" "" off) # long enough for all 12 to overlap
off=$(probe origin:a:cold-off)
echo "# stampede: false: $off computations for 12 requests"
check "with stampede: false the same burst computes several times" yes \
    "$([ "$(count "computed by pool a" "$bodies")" = 12 ] && [ "$off" -gt 1 ] && echo yes || echo "no ($off)")"

# 2. The same item key in two pools: pool B's computation does not wait for pool A's.
request "/hold?pool=a&key=same" >"$tmp/held" &
holder=$!
await holding:a:same
check "pool B computes the item key that pool A is computing" "computed by pool b" "$(request "/cold?pool=b&key=same")"
check "... and finished while pool A's computation was still held" null "$(probe done:a:same)"
mark release:a:same
wait "$holder"
check "pool A's request then ends with its own value" "held by pool a" "$(cat "$tmp/held")"
# Within one pool the lock does hold: a second request waits and serves A's value.
request "/hold?pool=a&key=same2" >/dev/null &
holder=$!
await holding:a:same2
name=$(request "/lockname?pool=a&key=same2")
out=$(console ephpm:locks --store=host "$name")
check "while it computes, ephpm:locks NAME shows the pool's MemoLock lock (memo:<namespace>:memo:<key>) held" held \
    "$(awk -v n="$name" '$1 == n { print $2 }' <<<"$out")"
check "... and ephpm:locks (no name) lists it among the held locks" held \
    "$(awk -v n="$name" '$1 == n { print $2 }' <<<"$(console ephpm:locks --store=host)")"
request "/cold?pool=a&key=same2" >"$tmp/waiter" &
waiter=$!
sleep 0.3 # room for the waiter to reach the lock (if it did not, the checks below fail)
mark release:a:same2
wait "$waiter" "$holder"
check "in one pool a second request on the held key waits and serves the first one's value" "held by pool a" "$(cat "$tmp/waiter")"
check "... without computing" null "$(probe origin:a:same2)"

# 3. lock.factory (LockFactory autowiring).
check "LockFactory autowiring is a LockFactory on ephpm's EphpmStore, on the configured store" \
    "Ephpm\\Symfony\\Lock\\EphpmStore, held lock in the store \"host\": yes" "$(request /lock)"
offlock=$(request /lock "" off)
echo "# ephpm.lock off: $offlock"
check "with ephpm.lock off it is FrameworkBundle's own" no "$(has Ephpm "$offlock")"

# 4. Sessions: 40 concurrent requests on one session (a new one: ids are checked, strict mode).
s=$(request /session/start)
burst 40 "/session/incr" "PHPSESSID=$s" >/dev/null
check "40 concurrent requests on one ephpm session count to 40 (the 41st request reads it)" 41 \
    "$(request "/session/incr" "PHPSESSID=$s")"
s=$(request /session/start "" off)
burst 40 "/session/incr" "PHPSESSID=$s" off >/dev/null
unlocked=$(request "/session/incr" "PHPSESSID=$s" off)
echo "# session locking: false: the 41st request counted $unlocked"
check "with session locking: false the same run loses updates" yes \
    "$([ "$unlocked" -lt 41 ] && echo yes || echo "no ($unlocked)")"

# 4b. The same stores given as DSNs from env vars (env "dsn"): framework.lock:
# '%env(LOCK_DSN)%', session.handler_id: '%env(SESSION_DSN)%', pool.a's provider
# '%env(CACHE_DSN)%', all ephpm://host.
check "framework.lock: %env(LOCK_DSN)% = ephpm://host is ephpm's EphpmStore on the store \"host\"" \
    "Ephpm\\Symfony\\Lock\\EphpmStore, held lock in the store \"host\": yes" "$(request /lock "" dsn)"
s=$(request /session/start "" dsn)
burst 40 "/session/incr" "PHPSESSID=$s" dsn >/dev/null
check "session.handler_id: %env(SESSION_DSN)% = ephpm://host: 40 concurrent requests count to 40 (a locking ephpm session)" 41 \
    "$(request "/session/incr" "PHPSESSID=$s" dsn)"
bodies=$(burst 12 "/cold?pool=a&key=cold-dsn&ms=300" "" dsn)
check "provider: %env(CACHE_DSN)% = ephpm://host: 12 concurrent requests on a cold key get the value, computed once" "12 1" \
    "$(count "computed by pool a" "$bodies") $(probe origin:a:cold-dsn)"

# 5. The console commands as root, and as www-data, against www-data's store.
wvar="$tmp/www-var"; mkdir "$wvar"; chown "$web" "$wvar"
as_web() { runuser -u "$web" -- env SYMFONY_VAR_DIR="$wvar" COLUMNS=400 APP_ENV=test php "${ini[@]}" "$@" 2>&1; }
as_web -r '(new Ephpm\Kv())->set("fpm-only", "www-data wrote this");'
as_web -r '$l = (new Ephpm\MemoLock())->acquire("deploy", 60000); file_put_contents($argv[1], $l->fence);
    (new Ephpm\Kv())->wait("let go", 0, 60);' "$wvar/fence" &
echo $! >"$tmp/holder.pid"
for _ in $(seq 200); do [ -s "$wvar/fence" ] && break; sleep 0.05; done
out=$(console ephpm:stats)
check "ephpm:stats as root names root's stores" yes "$(has "Acting as Unix user root (uid 0): its shm:// stores are in /dev/shm/ephpm-0/." "$out")"
check "... and warns that php-fpm's are www-data's, in /dev/shm/ephpm-$wuid/" yes \
    "$(has "php-fpm runs as www-data (ephpm.web_user), this command as root" "$out")$(has "(in /dev/shm/ephpm-$wuid/)" "$out" | sed 's/yes//')"
check "without the warning (web_user: root, env off) the same run says nothing of www-data" no \
    "$(has "www-data" "$(env=off console ephpm:stats)")"
check "ephpm:stats as www-data: its counters in a table (a list such as shard_fill is no cell)" "yes 0" \
    "$(as_web "$app/bin/console" ephpm:stats | grep -qE '^ +entries +[0-9]+' && echo yes) $(as_web "$app/bin/console" ephpm:stats >/dev/null; echo $?)"
out=$(console ephpm:locks deploy)
check "ephpm:locks as root: www-data's held lock is not in root's store (and it warns)" "free yes" \
    "$(awk '$1 == "deploy" { print $2 }' <<<"$out") $(has "[WARNING] php-fpm runs as www-data" "$out")"
out=$(as_web "$app/bin/console" ephpm:locks deploy)
check "ephpm:locks as www-data names www-data's store, without a warning" "yes no" \
    "$(has "Acting as Unix user www-data (uid $wuid)" "$out") $(has WARNING "$out")"
check "... and shows the lock held, with its TTL and the holder's fence" "held yes $(cat "$wvar/fence")" \
    "$(awk '$1 == "deploy" { print $2, ($3 > 0 && $3 <= 60 ? "yes" : $3), $5 }' <<<"$out")"
check "... as does ephpm:locks with no name, listing the held locks" "held $(cat "$wvar/fence")" \
    "$(awk '$1 == "deploy" { print $2, $5 }' <<<"$(as_web "$app/bin/console" ephpm:locks)")"
console ephpm:clear --prefix=fpm- >/dev/null
check "ephpm:clear --prefix as root leaves www-data's key" '"www-data wrote this"' \
    "$(as_web -r 'echo json_encode((new Ephpm\Kv())->get("fpm-only"));')"
out=$(as_web "$app/bin/console" ephpm:clear --prefix=fpm-)
check "ephpm:clear --prefix as www-data removes it" "null yes" \
    "$(as_web -r 'echo json_encode((new Ephpm\Kv())->get("fpm-only"));') $(has '[OK] Removed 1 key starting with "fpm-"' "$out")"
as_web -r '(new Ephpm\Kv())->set("let go", 1);'
wait "$(cat "$tmp/holder.pid")" 2>/dev/null; rm -f "$tmp/holder.pid"

# 6. ephpm:clear is scoped: sessions and held locks stay unless asked; keys show by pool name.
s=$(request /session/start)
request "/session/incr" "PHPSESSID=$s" >/dev/null
request "/cold?pool=a&key=clear-me" >/dev/null
request "/hold?pool=a&key=held-on-clear" >"$tmp/held" &
holder=$!
await holding:a:held-on-clear
name=$(request "/lockname?pool=a&key=held-on-clear")
out=$(console ephpm:clear --store=host)
check "ephpm:clear (no option) counts what it removed by pool name, not by namespace" yes "$(grep -qE '^ *pool\.a +[0-9]+ *$' <<<"$out" && echo yes || echo "no: $out")"
check "... and says it kept the sessions and the held lock" yes "$(has "(--sessions removes them) and 1 held lock (--locks removes them)" "$out")"
check "... the held lock is still held" held "$(awk -v n="$name" '$1 == n { print $2 }' <<<"$(console ephpm:locks --store=host "$name")")"
check "... shown with its pool's name" pool.a "$(awk -v n="$name" '$1 == n { print $NF }' <<<"$(console ephpm:locks --store=host "$name")")"
check "... the session kept its counter (the next request counts 2)" 2 "$(request "/session/incr" "PHPSESSID=$s")"
# The counter is reset here (on shm it shares the store and went with the rest): one computation counts 1.
php "${ini[@]}" -r '(new Ephpm\Kv(null, "test:"))->delete("origin:a:clear-me");'
request "/cold?pool=a&key=clear-me" >/dev/null
check "... and the pool's item was removed (computed again)" 1 "$(probe origin:a:clear-me)"
mark release:a:held-on-clear
wait "$holder"
console ephpm:clear --store=host --pool=pool.b >/dev/null
console ephpm:clear --store=host --sessions >/dev/null
check "ephpm:clear --sessions removes the sessions (the next request counts 1)" 1 "$(request "/session/incr" "PHPSESSID=$s")"
absent="symfonytest_absent_$$"
out=$(APP_ENV=test php "${ini[@]}" -d "ephpm.store_name=$absent" "$app/bin/console" ephpm:stats --store=default 2>&1)
check "ephpm:stats on a store that does not exist says so and does not create it" "yes no" \
    "$(has "does not exist for this user" "$out") $([ -e "/dev/shm/ephpm-$(id -u)/$absent" ] && echo yes || echo no)"
APP_ENV=test php "${ini[@]}" -d "ephpm.store_name=$absent" "$app/bin/console" ephpm:clear >/dev/null 2>&1
APP_ENV=test php "${ini[@]}" -d "ephpm.store_name=$absent" "$app/bin/console" ephpm:locks >/dev/null 2>&1
check "... nor do ephpm:clear and ephpm:locks" no "$([ -e "/dev/shm/ephpm-$(id -u)/$absent" ] && echo yes || echo no)"
rm -f "/dev/shm/ephpm-$(id -u)/$absent"

check "config:dump-reference ephpm prints the ephpm: reference (build() runs again on a compiled container)" yes \
    "$(has "stampede_wait_ms:     5000" "$(console config:dump-reference ephpm)")"

if [ "$failed" -gt 0 ]; then
    echo "--- fpm.log"; tail -n 30 "$tmp/fpm.log"
    echo "--- var/log"; tail -n 30 "$tmp/var/log/"*.log 2>/dev/null
fi
summary "$label"
