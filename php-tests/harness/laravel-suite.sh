#!/usr/bin/env bash
# A real Laravel application (php-tests/laravel-app, Debian's php-laravel-framework: 8.83 here, 10 and 13 in php-tests/systems;
# with EPHPM_LARAVEL_SRC a checkout of a release branch, php-tests/laravel-branches/README.md)
# on ephpm's cache and session drivers, served by real php-fpm (20 static workers on a
# unix socket in a temporary folder) driven with cgi-fcgi, plus CLI processes of the same
# application (forked racers, a long-running kernel loop).
#   php-tests/harness/laravel-suite.sh path/to/ephpm.so [shm|redis]
# With "redis" the `ephpm` stores and the sessions live on a redis-server this script
# starts on a unix socket in the same folder (and stops by pid); the summary line is
# "laravel-redis: ...". Counters and markers always live in the host's shm store.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
so=$(realpath "$1")
backend=${2:-shm}
label=laravel; [ "$backend" != shm ] && label=laravel-$backend
find_fpm "$label"
if [ ! -f /usr/share/php/Illuminate/Foundation/Application.php ]; then
    skip "php-laravel-framework is not installed"; summary "$label"; exit 0
fi
app=$(cd "$here/../laravel-app" && pwd)
tmp=$(mktemp -d)
store="laraveltest_$$"
# dom: Laravel 11's console output (termwind) renders through DOMDocument.
ini=(-n -d "extension=$so" -d "ephpm.store_name=$store" -d ephpm.shm_size=16M -d extension=mbstring -d extension=ctype
     -d extension=intl -d extension=dom -d display_errors=stderr)
# make_base DIR: an application base folder: storage/ and bootstrap/cache/ of its own,
# config/ and routes/ linked from the repository.
make_base() {
    mkdir -p "$1/storage/logs" "$1/storage/framework" "$1/bootstrap/cache"
    ln -s "$app/config" "$1/config"
    ln -s "$app/routes" "$1/routes"
}
make_base "$tmp/app"
export LARAVEL_BASE="$tmp/app" EPHPM_DSN=""
if [ "$backend" = redis ]; then
    start_redis "$tmp"
    EPHPM_DSN="unix://$tmp/redis.sock"
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
pm.max_children = 20
clear_env = no
CONF
"$fpm" "${ini[@]}" -y "$tmp/fpm.conf" -R -F &
master=$!
cleanup() {
    kill -QUIT "$master" 2>/dev/null; wait "$master" 2>/dev/null
    [ -f "$tmp/redis.pid" ] && kill "$(cat "$tmp/redis.pid")" 2>/dev/null && sleep 0.1
    rm -rf "$tmp" "/dev/shm/ephpm-$(id -u)/$store" "/dev/shm/ephpm-$(id -u www-data 2>/dev/null)/$store"
}
trap cleanup EXIT
for _ in $(seq 100); do [ -S "$tmp/fpm.sock" ] && break; sleep 0.05; done

request() { # request PATH?QUERY [COOKIE] -> body
    local query=""
    case "$1" in *\?*) query=${1#*\?} ;; esac
    SCRIPT_FILENAME="$app/public/index.php" SCRIPT_NAME=/index.php REQUEST_METHOD=GET REQUEST_URI="$1" \
        QUERY_STRING="$query" HTTP_HOST=localhost SERVER_NAME=localhost SERVER_PORT=80 HTTP_COOKIE="${2:-}" \
        cgi-fcgi -bind -connect "$tmp/fpm.sock" 2>/dev/null | sed '1,/^\r\{0,1\}$/d' | head -c 300
}
burst() { # burst N PATH?QUERY [COOKIE] -> the N bodies, one a line, sorted
    local i
    for i in $(seq "$1"); do request "$2" "${3:-}" >"$tmp/body.$i" & done
    wait $(jobs -p | grep -v "^$master\$") 2>/dev/null
    for i in $(seq "$1"); do cat "$tmp/body.$i"; echo; done | sort
}
cli() { php "${ini[@]}" "$app/cli.php" "$@"; }
probe() { php "${ini[@]}" -r 'echo json_encode((new Ephpm\Kv(null, "test:"))->get($argv[1]));' "$1"; }
mark() { php "${ini[@]}" -r '(new Ephpm\Kv(null, "test:"))->set($argv[1], 1);' "$1"; }
await() { # await KEY: until the probe key exists, 20 s at most
    php "${ini[@]}" -r '$kv = new Ephpm\Kv(null, "test:"); $t = microtime(true) + 20;
        while (!$kv->has($argv[1]) && microtime(true) < $t) usleep(2000);' "$1"
}
field() { # field NAME TEXT: the value of the line "NAME: value" in TEXT
    awk -v n="$1: " 'index($0, n) == 1 { print substr($0, length(n) + 1) }' <<<"$2"
}
count() { # count LINE TEXT: how many lines of TEXT are LINE
    grep -cxF -- "$1" <<<"$2"
}

# 1. Cache::add() is atomic; RateLimiter loses no hit.
check "8 processes x 50 rounds racing Cache::add() on a fresh key: one winner every round" \
    "50 rounds of 50 with one winner, at most 1 winners" "$(cli add-race ephpm 8 50)"
check "RateLimiter::hit() 50 times in each of 8 processes at once: no hit lost" \
    "0 hits lost of 401" "$(cli rate-limit 8 50)"

# 2. remember(): 12 concurrent requests, a cold key, a 300 ms origin. The requests meet
# (?together=12) before they ask the cache, so a slow start cannot serialise them.
bodies=$(burst 12 "/remember?store=ephpm&key=cold&ms=300&together=12")
check "12 concurrent requests on a cold remember() key all get the value" 12 "$(count computed "$bodies")"
check "... and the origin is called once" 1 "$(probe origin:cold)"
bodies=$(burst 12 "/remember?store=ephpm_plain&key=cold-plain&ms=300&together=12")
plain=$(probe origin:cold-plain)
echo "# stampede => false: $plain origin calls for 12 requests"
check "with 'stampede' => false the same burst calls the origin several times" yes \
    "$([ "$(count computed "$bodies")" = 12 ] && [ "$plain" -gt 1 ] && echo yes || echo "no ($plain calls)")"

# 3. flexible(): a stale key, 12 concurrent requests.
check "flexible() stores a value" old "$(request "/flexible?key=hot&prime=1")"
sleep 1.5 # past its 1 s of freshness: stale now
bodies=$(burst 12 "/flexible?key=hot&together=12")
check "12 concurrent requests on a stale flexible() key all get the stale value" 12 "$(count old "$bodies")"
mark "client has the responses:hot"
await "refresh saw:hot"
check "the refresh ran after its response had reached the client" '"the client had the responses"' "$(probe "refresh saw:hot")"
check "... and ran once" 1 "$(probe refreshes:hot)"
by='"ephpm after the response"'
php -n -r "require '$here/laravel-autoload.php'; exit(class_exists('Illuminate\\Support\\Defer\\DeferredCallbackCollection') ? 0 : 1);" \
    && by="\"Laravel's defer()\""
check "... through Laravel's defer() where Laravel has one (11 and later)" "$by" "$(probe "refresh by:hot")"
check "the refreshed value is served next" new "$(request "/flexible?key=hot")"

# 4. Sessions.
sid() { tr -dc 'a-zA-Z0-9' </dev/urandom | head -c 40; }
s=$(sid)
burst 40 "/session/incr" "laravel_session=$s" >/dev/null
check "40 concurrent requests on one session count to 40 (the 41st request reads it)" 41 \
    "$(request "/session/incr" "laravel_session=$s")"
s=$(sid)
burst 40 "/session/incr?locking=0" "laravel_session=$s" >/dev/null
unlocked=$(request "/session/incr" "laravel_session=$s")
echo "# locking => false: the 41st request counted $unlocked"
check "with 'locking' => false the same run loses updates (but keeps some)" yes \
    "$([ "$unlocked" -gt 1 ] && [ "$unlocked" -lt 41 ] && echo yes || echo "no ($unlocked)")"
s=$(sid)
request "/session/save-then-wait" "laravel_session=$s" >"$tmp/first" &
await "first saved"
check "a request waiting for a session gets what another request saved" "saved by the first request" \
    "$(request "/session/read" "laravel_session=$s")"
wait $(jobs -p | grep -v "^$master\$") 2>/dev/null
check "... while that request was still running" "the second request finished first" "$(cat "$tmp/first")"
# A request that saved its session and changes it afterwards (Laravel writes it again at
# its end) must not overwrite what another request saved in between.
s=$(sid)
request "/session/save-then-change" "laravel_session=$s" >/dev/null &
await "late: first saved"
request "/session/put?key=second" "laravel_session=$s" >/dev/null
mark "late: second saved"
wait $(jobs -p | grep -v "^$master\$") 2>/dev/null
check "a second write of a session, after its lock went, keeps what another request saved meanwhile" \
    '{"first":"kept","second":"kept"}' "$(request "/session/keys" "laravel_session=$s")"
loop=$(cli session-loop 200)
check "200 requests through one kernel (handle, terminate): no session lock key between requests" 0 \
    "$(field "requests after which a session lock key existed" "$loop")"
check "... and the three sessions' counters add up to 200" "[67,67,66]" "$(field "the three counters" "$loop")"

# 5. Tags, each step in a process of its own.
check "tags(people, artists)->put()" true "$(cli tags put people,artists john J)"
check "tags(artists)->put()" true "$(cli tags put artists anne A)"
check "tags(people, artists)->get() in another process" '"J"' "$(cli tags get people,artists john)"
check "tags(people)->flush()" true "$(cli tags flush people)"
check "after it, tags(people, artists)->get() is null" null "$(cli tags get people,artists john)"
check "... and tags(artists)->get() of a key without the tag people is kept" '"A"' "$(cli tags get artists anne)"

# 6. The store contract, a line each (cli.php contract).
contract=$(cli contract ephpm)
while IFS='|' read -r name expected; do
    check "contract: $name" "$expected" "$(field "$name" "$contract")"
done <<'ROWS'
add of an absent key|true
add of a present key|false
value after both adds|1
forget of a present key|true
forget of a missing key|false
increment of a missing key|1
increment by 5, decrement by 2|[6,4]
increment of a string|false
increment past PHP_INT_MAX|false
value after the overflow|true
putMany|true
many|[1,{"x":2},null]
forever|true
forever value|"kept"
raw key in the backend|"kept"
lock taken|true
block() after the release|"got it"
flush of ephpm_other|true
ephpm_other key after its flush|null
this store's key after ephpm_other's flush|"kept"
flush of a store with an empty prefix|true
this store's key after it|null
session after the cache flush|"ada"
ROWS
# Each store keeps to its DSN: on redis the `ephpm` store is not in the host's store,
# and the shm store `ephpm_host` is not in Redis.
crossed=false; [ "$backend" = redis ] || crossed=true
check "contract: the ephpm store's key is in the host's shm store: $crossed" "$crossed" "$(field "in the host store too" "$contract")"
check "contract: the ephpm_host store's key is in the ephpm store's backend: $crossed" "$crossed" "$(field "ephpm_host key in the backend" "$contract")"

# 7. Auto-discovery by Laravel's PackageManifest: an installed.json whose package entry
# carries the "extra" of ephpm/integrations (php/composer.json), and config/app.php without the provider.
make_base "$tmp/discover"
mkdir -p "$tmp/discover/vendor/composer"
php -n -r '$c = json_decode(file_get_contents($argv[1]), true);
    echo json_encode(["packages" => [["name" => $c["name"], "version" => "dev-main", "type" => "library", "extra" => $c["extra"] ?? []]]]);' \
    "$here/../../php/composer.json" >"$tmp/discover/vendor/composer/installed.json"
found=$(EPHPM_DISCOVERY=1 LARAVEL_BASE="$tmp/discover" cli discovered 2>&1)
check "auto-discovery: the provider is registered" true "$(field "provider registered" "$found")"
check "... not listed in config/app.php" false "$(field "listed in config/app.php" "$found")"
check "... and Cache::store('ephpm') works" '"found"' "$(field get "$found")"
rm "$tmp/discover/vendor/composer/installed.json" "$tmp/discover/bootstrap/cache/packages.php"
check "without installed.json the provider is not there (the check above can fail)" false \
    "$(field "provider registered" "$(EPHPM_DISCOVERY=1 LARAVEL_BASE="$tmp/discover" cli discovered 2>/dev/null)")"

# 8. Issue #27: tags(...)->remember() computes once; get() reads what flexible() wrote;
# RateLimiter::attempt() and the throttle middleware let exactly the limit through.
bodies=$(burst 12 "/remember?store=ephpm&key=cold-tagged&tags=people,artists&ms=300&together=12")
check "12 concurrent requests on a cold tags(...)->remember() key all get the value" 12 "$(count computed "$bodies")"
check "... and the origin is called once" 1 "$(probe origin:cold-tagged)"
check "flexible() stores a value to read" old "$(request "/flexible?key=read&prime=1")"
check "Cache::get() and many() of a fresh flexible() key give its value" '["old",{"read":"old"}]' "$(request "/flexible/get?key=read")"
sleep 1.5 # stale now
check "... and of a stale one" '["old",{"read":"old"}]' "$(request "/flexible/get?key=read")"
bodies=$(burst 20 "/attempt?key=a&max=5&together=20")
check "RateLimiter::attempt() with a limit of 5, 20 concurrent requests: 5 pass, 15 are refused" "5 15" \
    "$(count passed "$bodies") $(count refused "$bodies")"
check "... and the callback ran 5 times" 5 "$(probe "attempt ran:a")"
bodies=$(burst 20 "/throttled?key=t&together=20")
check "the throttle:5,1 middleware (tooManyAttempts(), then hit()), 20 concurrent requests: 5 pass" 5 "$(count passed "$bodies")"

# 9. cache:clear and the ephpm:* commands ask whose store it is: php-fpm runs as this
# user; run with ephpm.web_user another one (www-data), or run as www-data while
# ephpm.web_user says php-fpm is this user, they warn and touch nothing, and never make
# a store. The store is the host's shm://, so on redis only the first check applies.
artisan() { php "${ini[@]}" "$app/artisan" "$@" 2>&1; echo "rc=$?"; }
raw() { php "${ini[@]}" -r 'echo json_encode((new Ephpm\Kv())->get($argv[1]));' "$1"; }
has() { grep -qF -- "$1" <<<"$2" && echo yes || echo no; }
me=$(id -un)
request "/remember?store=ephpm&key=kept&ms=0" >/dev/null
out=$(EPHPM_WEB_USER=www-data artisan cache:clear)
if [ "$backend" = redis ]; then
    check "cache:clear of a redis store as another user than ephpm.web_user clears it (not one user's)" "yes rc=0" \
        "$(has "Application cache cleared" "$out") $(tail -n1 <<<"$out")"
else
    check "cache:clear as $me while ephpm.web_user is www-data: warns, clears nothing, exit 1" "yes no rc=1" \
        "$(has "php-fpm runs as www-data (ephpm.web_user), this command as $me" "$out") $(has "Application cache cleared" "$out") $(tail -n1 <<<"$out")"
    check "... and the cache key php-fpm wrote is still there" '"computed"' "$(raw cache:main:kept)"
    out=$(EPHPM_WEB_USER=www-data artisan ephpm:stats)
    check "ephpm:stats likewise: warns, shows nothing, exit 1" "yes no rc=1" \
        "$(has "this command as $me" "$out") $(has "memory_used" "$out") $(tail -n1 <<<"$out")"
    web=www-data; wuid=$(id -u "$web")
    chmod 711 "$tmp"; make_base "$tmp/www"; chown -R "$web" "$tmp/www"
    as_web() { runuser -u "$web" -- env LARAVEL_BASE="$tmp/www" EPHPM_WEB_USER="$me" php "${ini[@]}" "$app/artisan" "$@" 2>&1; echo "rc=$?"; }
    for command in cache:clear ephpm:stats ephpm:locks ephpm:clear; do
        out=$(as_web "$command")
        check "$command as www-data while php-fpm (ephpm.web_user) is $me: warns, exit 1, and makes no store" "yes rc=1 absent" \
            "$(has "php-fpm runs as $me (ephpm.web_user), this command as www-data" "$out") $(tail -n1 <<<"$out") $([ -e "/dev/shm/ephpm-$wuid/$store" ] && echo made || echo absent)"
    done
    # As php-fpm's user: a session, a held lock, a cache key and another key.
    s=$(sid)
    request "/session/incr" "laravel_session=$s" >/dev/null
    php "${ini[@]}" -r '$l = (new Ephpm\MemoLock())->acquire("deploy", 60000); (new Ephpm\Kv(null, "test:"))->set("holding", 1);
        (new Ephpm\Kv())->wait("let go", 0, 60);' &
    holder=$!
    await holding
    php "${ini[@]}" -r '(new Ephpm\Kv())->set("other", 1);'
    as_me() { EPHPM_WEB_USER="$me" artisan "$@"; }
    out=$(as_me cache:clear)
    check "cache:clear as php-fpm's user clears the cache store" "yes null" "$(has "Application cache cleared" "$out") $(raw cache:main:kept)"
    check "... and keeps the session" 2 "$(request "/session/incr" "laravel_session=$s")"
    out=$(as_me ephpm:locks deploy)
    check "ephpm:locks deploy shows the lock held" held "$(awk -F'|' '$2 ~ /deploy/ { gsub(/ /, "", $3); print $3 }' <<<"$out")"
    out=$(as_me ephpm:clear)
    check "ephpm:clear removes the other keys, and says what it kept" "null yes" "$(raw other) $(has " session keys (--sessions removes them) and 1 held lock (--locks removes them)" "$out")"
    check "... keeps the session" 3 "$(request "/session/incr" "laravel_session=$s")"
    check "... and the held lock" held "$(awk -F'|' '$2 ~ /deploy/ { gsub(/ /, "", $3); print $3 }' <<<"$(as_me ephpm:locks deploy)")"
    as_me ephpm:clear --sessions --locks >/dev/null
    check "ephpm:clear --sessions --locks removes both" "1 free" \
        "$(request "/session/incr" "laravel_session=$s") $(awk -F'|' '$2 ~ /deploy/ { gsub(/ /, "", $3); print $3 }' <<<"$(as_me ephpm:locks deploy)")"
    kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
fi

if [ "$failed" -gt 0 ]; then
    echo "--- laravel.log"; tail -n 30 "$tmp/app/storage/logs/laravel.log" 2>/dev/null
    echo "--- fpm.log"; tail -n 30 "$tmp/fpm.log"
fi
summary "$label"
