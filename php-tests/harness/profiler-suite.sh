#!/usr/bin/env bash
# The web profiler's "ephpm" panel in a real Symfony 5.4 kernel (php-tests/profiler-app:
# FrameworkBundle, TwigBundle, WebProfilerBundle, profiler collecting), served by PHP's
# built-in web server on 127.0.0.1 with 4 workers. One request does 2 hits, 3 misses (one
# computed behind the stampede lock, one waited for /cold's computation), a stale read of
# the framework.cache pool on StaleCacheAdapter and a lock acquisition that waits for
# holder.php; its panel, rendered by headless Chromium, must show those numbers.
# Ends with "profiler: N passed, N failed, N skipped".
#   php-tests/harness/profiler-suite.sh path/to/ephpm.so
# PROFILER_SCREENSHOT=docs/profiler-panel.png also writes the panel's screenshot there.
# EPHPM_PROFILER_WIRING=off runs it without ProfilerWiring: every panel check must fail.
set -u
here=$(cd "$(dirname "$0")" && pwd)
app=$(cd "$here/../profiler-app" && pwd)
so=$(realpath "$1")
# shellcheck source=lib.sh
. "$here/lib.sh"
if [ ! -f /usr/share/php/Symfony/Bundle/WebProfilerBundle/autoload.php ] || ! command -v chromium >/dev/null; then
    skip "Symfony's WebProfilerBundle or chromium is not installed"; summary profiler; exit 0
fi
work=$(mktemp -d)
store=profiler_suite_$$
export EPHPM_PROFILER_VAR="$work/var"
php_ephpm=(php -d "extension=$so" -d "ephpm.store_name=$store")
server=""
cleanup() {
    [ -n "$server" ] && kill -- -"$server" 2>/dev/null
    rm -rf "$work" /dev/shm/ephpm-"$(id -u)"/"$store"*
}
trap cleanup EXIT

# A free loopback port (the kernel picks it; the socket is closed before the server binds).
port=$(php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo explode(":", stream_socket_get_name($s, false))[1];')
url="http://127.0.0.1:$port"
PHP_CLI_SERVER_WORKERS=4 setsid "${php_ephpm[@]}" -S "127.0.0.1:$port" "$app/index.php" >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do curl -s -o /dev/null "$url/" && break; sleep 0.1; done

# The Kv the processes meet in, read from here.
signal_set() { "${php_ephpm[@]}" -r '$k = new Ephpm\Kv(null, "profiler-test:"); foreach (array_slice($argv, 1) as $key) { for ($i = 0; $i < 500 && !$k->has($key); $i++) usleep(20000); }' "$@"; }
token_of() { sed -n 's/^X-Debug-Token: *\([0-9a-f]*\).*/\1/Ip' "$1" | tr -d '\r'; }

check "warming the pools" "warm" "$(curl -s "$url/warm")"
sleep 1.2   # the stale pool's "report" lives 1 s: now it is stale
"${php_ephpm[@]}" "$app/holder.php" >"$work/holder.log" 2>&1 &
holder=$!
curl -s -D "$work/cold.headers" -o "$work/cold.body" "$url/cold" &
cold=$!
signal_set holder-has-lock cold-computing
curl -s -D "$work/page.headers" -o "$work/page.body" "$url/page"
wait "$cold" "$holder"
check "/page's answers" "a: A|b: B|absent: false|fresh: fresh value|report: report v1 (stale)|lock: true|read lock: true|cold: cold value" "$(paste -sd'|' "$work/page.body")"
check "/cold computed the key /page waited for" "cold: cold value" "$(cat "$work/cold.body")"
check "the stale value was refreshed once, after /page's response" "report: report v2" "$(curl -s "$url/peek")"

# The numbers a panel shows, read from the DOM Chromium built: "name=value" per
# data-ephpm metric, then one line per pool row, stampede row and lock row.
panel() {
    chromium --headless=new --no-sandbox --disable-gpu --dump-dom "$url/_profiler/$1?panel=ephpm" 2>/dev/null >"$work/$1.html"
    php -r '
        $d = new DOMDocument(); @$d->loadHTMLFile($argv[1]); $x = new DOMXPath($d);
        foreach ($x->query("//div[@class=\"metrics\"]//span[@data-ephpm]") as $n) echo $n->getAttribute("data-ephpm"), "=", trim($n->textContent), " ";
        echo "\n";
        foreach ($x->query("//tr[@data-ephpm-pool]") as $r) {
            echo "pool ", $r->getAttribute("data-ephpm-pool");
            foreach ($x->query(".//td[@data-ephpm]", $r) as $c) echo " ", $c->getAttribute("data-ephpm"), "=", trim($c->textContent);
            echo "\n";
        }
        foreach ($x->query("//tr[@data-ephpm-stampede]") as $r) echo "stampede ", $r->getAttribute("data-ephpm-stampede"), "\n";
        foreach ($x->query("//tr[@data-ephpm-lock]") as $r) echo "lock ", trim(preg_replace("/\s+/", " ", $r->textContent)), "\n";
    ' "$work/$1.html"
}
page_token=$(token_of "$work/page.headers")
cold_token=$(token_of "$work/cold.headers")
panel "$page_token" >"$work/page.panel"
panel "$cold_token" >"$work/cold.panel"
echo "/page's panel ($url/_profiler/$page_token?panel=ephpm):"; sed 's/^/    /' "$work/page.panel"
check "/page's totals: 3 hits (1 stale), 3 misses, 1 computed, 1 stampede avoided, 1 lock wait" \
    "hits=3 misses=3 stale=1 waited=1 computed=1 lock-waits=1" "$(head -1 "$work/page.panel" | sed 's/ $//')"
check "/page per pool: app 2 hits 3 misses, stale 1 hit served stale" \
    "pool app hits=2 misses=3 stale=0|pool stale hits=1 misses=0 stale=1" "$(grep '^pool' "$work/page.panel" | paste -sd'|')"
check "/page's stampede rows: fresh computed, cold waited" "stampede computed|stampede waited" \
    "$(grep '^stampede' "$work/page.panel" | paste -sd'|')"
check "/page's lock rows: invoice-42 written, blocking; catalogue read (still a read lock through the decorator)" \
    "lock invoice-42 write yes yes|lock catalogue read no yes" \
    "$(grep '^lock' "$work/page.panel" | sed 's/ [0-9.]* ms$//' | paste -sd'|')"
check "/page's lock wait took time (it is listed with its duration)" "1" \
    "$(grep -c '^lock invoice-42 .* [0-9][0-9.]* ms$' "$work/page.panel")"
check "/cold's totals: it computed the key (1 miss, 1 computed, nothing waited)" \
    "hits=0 misses=1 stale=0 waited=0 computed=1 lock-waits=0" "$(head -1 "$work/cold.panel" | sed 's/ $//')"

check "the toolbar has the ephpm item: 3 of 6 reads hit" "3/6" \
    "$(curl -s "$url/_wdt/$page_token" | php -r '$d = new DOMDocument(); @$d->loadHTML(stream_get_contents(STDIN)); $x = new DOMXPath($d);
        foreach ($x->query("//div[contains(@class, \"sf-toolbar-block-ephpm\")]//span[@class=\"sf-toolbar-value\"]") as $n) echo trim($n->textContent);')"

chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1000 \
    --screenshot="$work/panel.png" "$url/_profiler/$page_token?panel=ephpm" >/dev/null 2>&1
check "the panel's screenshot is a PNG" "PNG" "$(head -c 4 "$work/panel.png" 2>/dev/null | tail -c 3)"
[ -n "${PROFILER_SCREENSHOT:-}" ] && cp "$work/panel.png" "$PROFILER_SCREENSHOT"
summary profiler
