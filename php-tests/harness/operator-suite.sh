#!/usr/bin/env bash
# Operating ephpm: the `ephpm` CLI against a live store written by PHP (every command,
# its --json, its refusals, as root on another user's store), the status page served by
# php-fpm behind nginx and opened in headless Chromium (its numbers are Kv::stats()'s, no
# console error, a screenshot in target/status-page.png (and docs/status-page.png, the
# README's, when missing or with UPDATE_SCREENSHOT=1), refused without the
# allowlist or the password, off with a 500 for an allowlist entry that is not exactly
# an address or CIDR block, never framed), and the metrics endpoint parsed by Python's
# prometheus_client (installed into target/pyenv if missing) with the same numbers, and
# key prefixes that are not UTF-8 or carry escapes as valid labels.
#   php-tests/harness/operator-suite.sh path/to/ephpm.so
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=$(cd "$here/../.." && pwd)
so=$(realpath "$1")
tmp=$(mktemp -d); chmod 755 "$tmp"
store="opsuite_$$"
ini=(-n -d "extension=$so" -d "ephpm.store_name=$store" -d ephpm.shm_size=16M)
shm="/dev/shm/ephpm-$(id -u)"
other=ephpm-test-operator
pids=()
cleanup() {
    touch "$tmp/stop"
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    rm -rf "$tmp" "$shm/$store"
    if id "$other" >/dev/null 2>&1; then
        rm -rf /dev/shm/ephpm-"$(id -u "$other")" /dev/shm/ephpm-"$(id -u "$other")"-*
        userdel -r "$other" 2>/dev/null
    fi
}
trap cleanup EXIT

if [ ! -x "$root/target/release/ephpm" ]; then
    check "target/release/ephpm is built (cargo build --release --no-default-features --features node --bin ephpm)" yes no
    summary operator; exit 1
fi
cp "$root/target/release/ephpm" "$tmp/ephpm"; chmod 755 "$tmp/ephpm"
cp "$so" "$tmp/ephpm.so"; chmod 644 "$tmp/ephpm.so"
bin="$tmp/ephpm"
cli() { "$bin" --store "$store" "$@"; }
php_() { php "${ini[@]}" -r "$1"; }
kvstats() { php_ 'echo json_encode((new Ephpm\Kv())->stats());'; }

# --- the command line itself ---------------------------------------------------------
"$bin" --help >"$tmp/out" 2>"$tmp/err"
check "--help: the usage on stdout, exit 0" "0 usage: yes" "$? $(head -c 6 "$tmp/out") $([ -s "$tmp/err" ] && echo no || echo yes)"
"$bin" >"$tmp/out" 2>"$tmp/err"
check "no command: exit 2, why and the usage on stderr, nothing on stdout" "2 ephpm: no command given 0" \
    "$? $(head -1 "$tmp/err") $(wc -c <"$tmp/out")"
"$bin" stats --frob 2>"$tmp/err"
check "an unknown option: exit 2" "2 ephpm: unknown option --frob" "$? $(head -1 "$tmp/err")"
"$bin" get 2>"$tmp/err"
check "get without a key: exit 2" "2 ephpm: get needs an argument" "$? $(head -1 "$tmp/err")"
cli stats 2>"$tmp/err"
check "a store nobody made: exit 1, named, and not made by looking" "1 yes no" \
    "$? $(grep -q "no store shm://$store" "$tmp/err" && echo yes) $([ -e "$shm/$store" ] && echo yes || echo no)"

# --- a live store: a PHP process writes it and keeps holding a lock -------------------
php "${ini[@]}" -r '
    $kv = new Ephpm\Kv();
    $kv->set("user:1", "alice"); $kv->set("user:2", [1, 2], 600); $kv->set("n", 42);
    for ($i = 0; $i < 5; $i++) { $kv->set("page:$i", str_repeat("x", 100)); }
    $kv->get("user:1"); $kv->get("user:2"); $kv->get("nope");
    $h = new Ephpm\SessionHandler($kv);
    $h->open("", "PHPSESSID"); $h->read("sid0123456789abcdef"); $h->write("sid0123456789abcdef", "a|i:1;"); $h->close();
    $lock = (new Ephpm\MemoLock($kv, 600000))->acquire("job");
    file_put_contents($argv[1] . "/ready", $lock->fence);
    while (!file_exists($argv[1] . "/stop")) { usleep(20000); }' "$tmp" &
pids+=($!)
for _ in $(seq 200); do [ -s "$tmp/ready" ] && break; sleep 0.05; done
fence=$(cat "$tmp/ready")
stats=$(kvstats)
entries=$(jq .entries <<<"$stats")
check "the fixture: 10 entries (3 user, 5 page, 1 session, 1 lock)" 10 "$entries"

row=$(cli stores | awk -v s="$store" '$2 == s')
check "stores: owner, name, kind, size, in use, processes (the holder), entries" "root $store store 16777216 yes 1 $entries" "$(echo $row)"
check "stores --json: the same" "root store 16777216 true 1 $entries $shm/$store" \
    "$(cli --json stores | jq -r --arg s "$store" '.[] | select(.name == $s) | "\(.owner) \(.kind) \(.size) \(.in_use) \(.processes) \(.entries) \(.path)"')"

check "stats --json is Kv::stats()" "$(jq -S . <<<"$stats")" "$(cli --json stats | jq -S .)"
check "stats: the same numbers as text" "$(jq -r 'to_entries[] | select(.key != "shard_fill") | "\(.key) \(.value)"' <<<"$stats")" \
    "$(cli stats | sed 's/  */ /' | grep -v '^shard_fill ')"
check "stats: each shard's fill as text" "$(jq -r '[.shard_fill[] | "\(.[0] * 1000 / .[1] | round / 10)"] | length' <<<"$stats") shards" \
    "$(cli stats | sed -n 's/^shard_fill *//p' | wc -w) shards"

check "keys: every key, sorted, with its TTL (- for none) and size" \
    "KEY TTL SIZE|job ttl 32|n - 8|page:0 - 100|page:1 - 100|page:2 - 100|page:3 - 100|page:4 - 100|session:sid0123456789abcdef ttl 6|user:1 - 5|user:2 ttl 22" \
    "$(cli keys | awk 'NR > 1 && $2 ~ /^[0-9.]+s$/ { $2 = "ttl" } { print $1, $2, $3 }' | paste -sd'|')"
check "keys user: (text)" "KEY|user:1|user:2" "$(cli keys user: | awk '{print $1}' | paste -sd'|')"
check "keys --json: key, size, ttl (null, or seconds left)" '[["user:1",5,true,false],["user:2",22,false,true]]' \
    "$(cli --json keys user: | jq -c '[.items[] | [.key, .size, (.ttl == null), (.ttl != null and .ttl > 590 and .ttl <= 600)]]')"
cli --limit 3 --json keys >"$tmp/out" 2>"$tmp/err"
check "keys --limit 3: 3 keys, truncated, said on stderr" "3 true yes" \
    "$(jq '.items | length' "$tmp/out") $(jq .truncated "$tmp/out") $(grep -q 'first 3 keys' "$tmp/err" && echo yes)"

check "locks: the held lock, its TTL and fence" "job $fence" "$(cli locks | awk 'NR > 1 {print $1, $3}')"
check "locks --json" "job $fence true" "$(cli --json locks | jq -r '.items[] | "\(.name) \(.fence) \(.ttl > 500)"')"

check "get: a string" alice "$(cli get user:1)"
check "get: an int" 42 "$(cli get n)"
check "get: a PHP array as var_export shows it, not serialized bytes" "$(php_ 'var_export([1, 2]);')" "$(cli get user:2)"
check "get --json: a serialized array, and the value it holds" '{"key":"user:2","type":"serialized","value":"a:2:{i:0;i:1;i:1;i:2;}","php":[1,2]}' "$(cli --json get user:2)"
php_ '$kv = new Ephpm\Kv(); $kv->set("tag\0\x01:t", serialize(["a" => (object) ["p" => "q"]]), 300);'
check "keys: a key with NUL and control bytes is shown escaped" 'yes' \
    "$(cli keys tag | grep -qF '"tag\000\001:t"' && echo yes)"
check "get of that key, addressed in the same escapes: a string holding serialize()'s output, decoded (as var_export, spacing aside)" \
    "/* a string holding serialize()'s output */|$(php_ 'var_export(["a" => (object) ["p" => "q"]]);' | tr -s ' ' | paste -sd'|')" \
    "$(cli get '"tag\000\001:t"' | tr -s ' ' | paste -sd'|')"
check "ttl of it (seconds left), of a key without one (none), of a missing key (exit 1)" "yes none 1" \
    "$(cli ttl '"tag\x00\x01:t"' | grep -qE '^(29[0-9]|300)\.[0-9]s$' && echo yes) $(cli ttl n) $(cli ttl nope 2>/dev/null; echo $?)"
cli del '"tag\000\001:t"' >/dev/null
check "set KEY VALUE --ttl: PHP reads the string, with its TTL" "string:hello yes" \
    "$(cli --ttl 60 set set:1 hello >/dev/null; php_ '$kv = new Ephpm\Kv(); $v = $kv->get("set:1"); echo gettype($v), ":", $v, " ", ($kv->ttl("set:1") > 50 ? "yes" : "no");')"
cli del set:1 >/dev/null
cli get nope 2>"$tmp/err" >/dev/null
check "get of a missing key: exit 1, said" "1 ephpm: no key nope" "$? $(cat "$tmp/err")"
check "del --json" '{"deleted":"user:1"}' "$(cli --json del user:1)"
check "PHP no longer sees it" NULL "$(php_ 'var_export((new Ephpm\Kv())->get("user:1"));')"
cli del user:1 2>/dev/null
check "del of a missing key: exit 1" 1 "$?"

cli flush </dev/null >/dev/null 2>"$tmp/err"
check "flush without --yes on a non-TTY refuses, exit 1, deletes nothing" "1 yes 9" \
    "$? $(grep -q 'refusing without --yes' "$tmp/err" && echo yes) $(jq .entries <<<"$(kvstats)")"
if command -v script >/dev/null; then
    printf 'n\n' | script -qec "$bin --store $store flush page:" /dev/null >"$tmp/out" 2>&1
    check "flush on a terminal asks; 'n' deletes nothing, exit 1" "1 yes 5" \
        "$? $(grep -q 'delete every key starting with "page:"' "$tmp/out" && echo yes) $(cli keys page: | tail -n +2 | wc -l)"
    printf 'y\n' | script -qec "$bin --store $store flush page:" /dev/null >"$tmp/out" 2>&1
    check "flush on a terminal, answered 'y'" "0 yes 0" \
        "$? $(grep -q 'deleted 5 keys' "$tmp/out" && echo yes) $(cli keys page: | tail -n +2 | wc -l)"
else
    skip "script(1) is not installed: flush's question is not tested"
fi
check "flush PREFIX --yes --json" '{"deleted":1} NULL 42' \
    "$(cli --yes --json flush user:) $(php_ '$kv = new Ephpm\Kv(); var_export($kv->get("user:2")); echo " ", $kv->get("n");')"

cli rm-store "$store" 2>"$tmp/err"
check "rm-store of a store in use: exit 1, says so, the segment stays" "1 yes yes" \
    "$? $(grep -q 'is in use' "$tmp/err" && echo yes) $([ -e "$shm/$store" ] && echo yes)"

# --- the status page and the metrics: php-fpm behind nginx ---------------------------
fpm=$(command -v php-fpm8.2 || command -v php-fpm)
if [ -z "$fpm" ] || ! command -v nginx >/dev/null || ! command -v chromium >/dev/null || ! command -v cgi-fcgi >/dev/null; then
    skip "php-fpm, nginx, cgi-fcgi or chromium is missing: the status page and metrics are not tested"
else
    # Refill what the flushes emptied, so that the page has prefixes to show.
    php_ '$kv = new Ephpm\Kv(); for ($i = 0; $i < 5; $i++) { $kv->set("page:$i", str_repeat("x", 100)); } $kv->set("user:1", "bob"); $kv->get("user:1");'
    {
        printf '[global]\npid = %s/fpm.pid\nerror_log = %s/fpm.log\ndaemonize = no\n' "$tmp" "$tmp"
        for pool in on off pw; do
            printf '[%s]\nuser = root\ngroup = root\nlisten = %s/%s.sock\npm = static\npm.max_children = 1\n' "$pool" "$tmp" "$pool"
            [ "$pool" = on ] && echo "env[EPHPM_STATUS_ALLOW] = 127.0.0.1, ::1"
            [ "$pool" = pw ] && echo "env[EPHPM_STATUS_PASSWORD] = s3cret"
        done
    } >"$tmp/fpm.conf"
    "$fpm" "${ini[@]}" -y "$tmp/fpm.conf" -R -F &
    pids+=($!)
    port=$((20000 + RANDOM % 20000))
    mkdir "$tmp/nginx"
    location() { # location URL SCRIPT POOL
        printf 'location = %s { include /etc/nginx/fastcgi_params; fastcgi_param SCRIPT_FILENAME %s/php/%s; fastcgi_pass unix:%s/%s.sock; }\n' \
            "$1" "$root" "$2" "$tmp" "$3"
    }
    cat >"$tmp/nginx.conf" <<CONF
daemon off; master_process off; user root; pid $tmp/nginx.pid; error_log $tmp/nginx.err;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $tmp/nginx/b; fastcgi_temp_path $tmp/nginx/f; proxy_temp_path $tmp/nginx/p;
  uwsgi_temp_path $tmp/nginx/u; scgi_temp_path $tmp/nginx/s;
  server {
    listen 127.0.0.1:$port;
    $(location /status.php status.php on)
    $(location /metrics.php metrics.php on)
    $(location /off/status.php status.php off)
    $(location /off/metrics.php metrics.php off)
  }
}
CONF
    nginx -p "$tmp/nginx" -c "$tmp/nginx.conf" 2>>"$tmp/nginx.err" &
    pids+=($!)
    for _ in $(seq 200); do
        [ -S "$tmp/on.sock" ] && [ -S "$tmp/off.sock" ] && [ -S "$tmp/pw.sock" ] && curl -s -o /dev/null "http://127.0.0.1:$port/off/status.php" && break
        sleep 0.05
    done
    url="http://127.0.0.1:$port"
    fcgi() { # fcgi POOL SCRIPT [ENV...] -> the status line's code
        env SCRIPT_FILENAME="$root/php/$2" SCRIPT_NAME="/$2" REQUEST_METHOD=GET REMOTE_ADDR=127.0.0.1 "${@:3}" \
            cgi-fcgi -bind -connect "$tmp/$1.sock" 2>/dev/null | sed -n 's/^Status: \([0-9]*\).*/\1/p'
    }

    check "status page and metrics off unless configured: 403 (over nginx)" "403 403" \
        "$(curl -s -o /dev/null -w '%{http_code}' "$url/off/status.php") $(curl -s -o /dev/null -w '%{http_code}' "$url/off/metrics.php")"
    check "allowlisted pool, another address: 403" 403 "$(fcgi on status.php REMOTE_ADDR=10.1.2.3)"
    check "password pool: none 401, wrong 401, right 200" "401 401 " \
        "$(fcgi pw status.php) $(fcgi pw status.php HTTP_AUTHORIZATION="Basic $(printf 'x:nope' | base64)") $(fcgi pw metrics.php HTTP_AUTHORIZATION="Basic $(printf 'ops:s3cret' | base64)")"
    check "the 401 asks for Basic credentials" yes \
        "$(env SCRIPT_FILENAME="$root/php/status.php" REQUEST_METHOD=GET REMOTE_ADDR=127.0.0.1 cgi-fcgi -bind -connect "$tmp/pw.sock" 2>/dev/null | grep -q '^WWW-Authenticate: Basic' && echo yes)"

    # The allowlist is strict: an entry that is not exactly an address or ADDRESS/BITS in
    # range turns both pages off (500, the entry named in the body and in PHP's error log,
    # which FastCGI carries on its stderr), never a wider rule than was written. The first
    # seven are issue 24's, byte for byte: each was a /0 or was dropped.
    fcgi_all() { # fcgi_all POOL SCRIPT [ENV...] -> the whole answer; FastCGI's stderr in $tmp/fcgi.err
        env SCRIPT_FILENAME="$root/php/$2" SCRIPT_NAME="/$2" REQUEST_METHOD=GET REMOTE_ADDR=127.0.0.1 "${@:3}" \
            cgi-fcgi -bind -connect "$tmp/$1.sock" 2>"$tmp/fcgi.err"
    }
    for entry in '10.0.0.0/' '10.0.0.0/ 8' '10.0.0.0/abc' '10.0.0.0/-1' 'localhost' '*' '10.0.0.0/8;192.168.0.0/16' \
        '::1/129' '10.0.0.0/33' '::ffff:10.0.0.0/95'; do
        named="\"${entry%% *}\""
        for script in status.php metrics.php; do
            fcgi_all off "$script" "EPHPM_STATUS_ALLOW=$entry" REMOTE_ADDR=127.0.0.2 >"$tmp/answer"
            check "EPHPM_STATUS_ALLOW=[$entry], $script from 127.0.0.2: 500, $named named in the body and the error log" \
                "500 yes yes" \
                "$(sed -n 's/^Status: \([0-9]*\).*/\1/p' "$tmp/answer") $(grep -qF "$named" "$tmp/answer" && echo yes) $(grep -F 'PHP message: ephpm: EPHPM_STATUS_ALLOW' "$tmp/fcgi.err" | grep -qF "$named" && echo yes)"
        done
    done
    allowed() { # allowed LIST ADDRESS -> the status page's code (200 when FPM sends none)
        local code; code=$(fcgi off status.php "EPHPM_STATUS_ALLOW=$1" "REMOTE_ADDR=$2"); echo "${code:-200}"
    }
    check "a valid allowlist lets in what it names and nothing else" "200 403 200 403 200 200 403" \
        "$(allowed '10.0.0.0/8, 127.0.0.2' 127.0.0.2) $(allowed '10.0.0.0/8, 127.0.0.2' 127.0.0.3) $(allowed '127.0.0.0/30' 127.0.0.3) $(allowed '127.0.0.0/30' 127.0.0.4) $(allowed '::ffff:127.0.0.0/104' 127.0.0.9) $(allowed ' ::1 ,, ' ::1) $(allowed '::1' 127.0.0.1)"

    # Neither page may be framed by another site, nor sniffed as another type; refusals too.
    for path in status.php metrics.php off/status.php off/metrics.php; do
        curl -s -o /dev/null -D "$tmp/head" "$url/$path"
        check "$path: CSP frame-ancestors 'none', X-Frame-Options: DENY, X-Content-Type-Options: nosniff" "yes yes yes" \
            "$(grep -qi "^Content-Security-Policy:.*frame-ancestors 'none'" "$tmp/head" && echo yes) $(grep -qi '^X-Frame-Options: DENY' "$tmp/head" && echo yes) $(grep -qi '^X-Content-Type-Options: nosniff' "$tmp/head" && echo yes)"
    done

    chrome=(chromium --headless=new --no-sandbox --disable-gpu --user-data-dir="$tmp/chrome" --enable-logging=stderr --v=0)
    "${chrome[@]}" --dump-dom "$url/status.php" >"$tmp/dom.html" 2>"$tmp/chrome.log"
    stats=$(kvstats)
    python3 - "$tmp/dom.html" >"$tmp/dom.txt" <<'PY'
import html.parser, sys
class P(html.parser.HTMLParser):
    """data-metric values: "NAME", or "prefix P NAME" / "L NAME" inside a prefix's or a lock's row."""
    def __init__(self):
        super().__init__(); self.rows = []; self.out = {}; self.text = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr":
            self.rows.append(f"prefix {a['data-prefix']} " if "data-prefix" in a
                             else f"{a['data-lock']} " if "data-lock" in a else "")
        m = a.get("data-metric")
        if m:
            key = (self.rows[-1] if self.rows else "") + m
            if "data-value" in a:
                self.out.setdefault(key, a["data-value"])
            else:
                self.text = key
    def handle_endtag(self, tag):
        if tag == "tr" and self.rows: self.rows.pop()
    def handle_data(self, d):
        if self.text: self.out.setdefault(self.text, d); self.text = None
p = P(); p.feed(open(sys.argv[1]).read())
for k, v in p.out.items(): print(f"{k}={v}")
PY
    dom() { sed -n "s/^$1=//p" "$tmp/dom.txt" | head -1; }
    want=""; got=""
    for m in memory_size memory_used memory_free entries hits misses evictions expirations repairs resets shards; do
        want+="$m=$(jq ".$m" <<<"$stats") "; got+="$m=$(dom "$m") "
    done
    check "Chromium's DOM: every counter is Kv::stats()'s" "$want" "$got"
    check "Chromium's DOM: the backend line" "$(jq -r .backend <<<"$stats")" "$(dom backend)"
    check "Chromium's DOM: 1 lock held (job, its fence), 1 session" "1 $fence 1" "$(dom locks_held) $(dom 'job fence') $(dom sessions)"
    check "Chromium's DOM: entries by prefix" "page=5 user=1 session=1" \
        "page=$(dom 'prefix page keys') user=$(dom 'prefix user keys') session=$(dom 'prefix session keys')"
    check "Chromium's DOM: the hit rate (in millionths; none before the first lookup)" \
        "$(jq 'if .hits + .misses == 0 then "none" else .hits / (.hits + .misses) * 1000000 | round end' <<<"$stats")" \
        "$(awk -v r="$(dom hit_rate)" 'BEGIN { if (r == "") print "\"none\""; else printf "%d", r * 1000000 + 0.5 }')"
    check "no console error while Chromium loads the page" "" \
        "$(grep -iE 'uncaught|console|refused to|failed to load|err_' "$tmp/chrome.log" | head -3)"
    mkdir -p "$root/docs"
    "${chrome[@]}" --hide-scrollbars --window-size=1280,1000 --screenshot="$tmp/status-page.png" "$url/status.php" >/dev/null 2>&1
    check "the screenshot is a 1280x1000 PNG" "PNG image data, 1280 x 1000" "$(file -b "$tmp/status-page.png" | cut -d, -f1-2)"
    # The README's screenshot: written when missing or asked for (UPDATE_SCREENSHOT=1), so
    # that a test run leaves the work tree as it was; the latest is in target/ either way.
    cp "$tmp/status-page.png" "$root/target/status-page.png"
    if [ ! -e "$root/docs/status-page.png" ] || [ "${UPDATE_SCREENSHOT:-0}" = 1 ]; then
        cp "$tmp/status-page.png" "$root/docs/status-page.png"
    fi

    # The metrics, parsed by prometheus_client.
    py="$root/target/pyenv/bin/python"
    if ! "$py" -c 'import prometheus_client' 2>/dev/null; then
        { python3 -m venv "$root/target/pyenv" && "$root/target/pyenv/bin/pip" install -q prometheus-client; } >"$tmp/pip.log" 2>&1
    fi
    if ! "$py" -c 'import prometheus_client' 2>/dev/null; then
        skip "prometheus_client cannot be installed into target/pyenv ($(tail -1 "$tmp/pip.log")): the metrics are not parsed"
    else
        # Key prefixes any client may choose (a session id from a cookie, a cache key):
        # invalid UTF-8, and a quote, a backslash, a newline and an escape.
        php_ '$kv = new Ephpm\Kv(); $kv->set("evil\xff\xfe:1", 1); $kv->set("ev\"il\\x\n\x1b[2J:1", 1);'
        curl -s -D "$tmp/metrics.head" "$url/metrics.php" >"$tmp/metrics.txt"
        stats=$(kvstats)
        check "metrics: Prometheus' content type" "text/plain; version=0.0.4; charset=utf-8" \
            "$(sed -n 's/^Content-Type: \(.*\)\r$/\1/p' "$tmp/metrics.head")"
        "$py" - "$tmp/metrics.txt" >"$tmp/metrics.parsed" 2>&1 <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
for fam in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in fam.samples:
        labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
        value = int(s.value) if s.value == int(s.value) else s.value
        print(f"{fam.type} {s.name}{{{labels}}} {value}")
PY
        check "metrics parse with prometheus_client" 0 "$?"
        metric() { sed -n "s/^$1 $2 //p" "$tmp/metrics.parsed"; }
        want=$(jq -r '"\(.memory_size) \(.memory_used) \(.entries) \(.hits) \(.misses) \(.evictions) \(.expirations) \(.repairs) \(.resets) \(.shards)"' <<<"$stats")
        got="$(metric gauge 'ephpm_memory_bytes{kind=size}') $(metric gauge 'ephpm_memory_bytes{kind=used}') $(metric gauge 'ephpm_entries{}')"
        for c in hits misses evictions expirations repairs resets; do got+=" $(metric counter "ephpm_${c}_total{}")"; done
        got+=" $(metric gauge 'ephpm_shards{}')"
        check "metrics: every number is Kv::stats()'s (counters typed counter)" "$want" "$got"
        got=""; for c in lock_waits lock_timeouts stampedes_avoided full_refusals; do got+="$(metric counter "ephpm_${c}_total{}") "; done
        check "metrics: lock waits, lock timeouts, stampedes avoided, store-full refusals are Kv::stats()'s" \
            "$(jq -r '"\(.lock_waits) \(.lock_timeouts) \(.stampedes_avoided) \(.full_refusals) "' <<<"$stats")" "$got"
        check "metrics: the store's age and maximum item size" "$(jq -r '"\(.max_item_size) yes"' <<<"$stats")" \
            "$(metric gauge 'ephpm_max_item_size_bytes{}') $([ "$(metric gauge 'ephpm_age_seconds{}')" -ge 1 ] && echo yes)"
        check "metrics: locks held, sessions, entries of prefix page" "1 1 5" \
            "$(metric gauge 'ephpm_locks_held{}') $(metric gauge 'ephpm_sessions{}') $(metric gauge 'ephpm_prefix_entries{prefix=page}')"
        check "metrics: the scrape is UTF-8; hostile prefixes are series of their own, bytes as \\xNN, a backslash doubled" \
            "yes 1 1" \
            "$(python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$tmp/metrics.txt" && echo yes) $(grep -cxF 'gauge ephpm_prefix_entries{prefix=evil\xff\xfe} 1' "$tmp/metrics.parsed") $(grep -cxF 'gauge ephpm_prefix_entries{prefix=ev"il\\x\x0a\x1b[2J} 1' "$tmp/metrics.parsed")"
    fi
fi

# --- the holder goes: the store can be removed --------------------------------------
touch "$tmp/stop"; wait "${pids[0]}" 2>/dev/null
for p in "${pids[@]:1}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
pids=()
check "rm-store once nobody uses it: removed, the segment gone" "removed $store no" \
    "$(cli rm-store "$store") $([ -e "$shm/$store" ] && echo yes || echo no)"
cli rm-store "$store" 2>/dev/null
check "rm-store of a store that is not there: exit 1" 1 "$?"

# --- root on another user's store ---------------------------------------------------
if [ "$(id -u)" != 0 ]; then
    skip "needs root to act on another user's store"
else
    id "$other" >/dev/null 2>&1 || useradd --system --create-home --shell /usr/sbin/nologin "$other"
    ouid=$(id -u "$other")
    runuser -u "$other" -- php -n -d "extension=$tmp/ephpm.so" -d "ephpm.store_name=$store" -d ephpm.shm_size=4M \
        -r '$kv = new Ephpm\Kv(); $kv->set("secret:1", "theirs"); $kv->set("secret:2", 2, 300);'
    check "stores as root lists the other user's store, used by no process" "$other $store store 4194304 no 0 2" \
        "$(echo $("$bin" stores | awk -v s="$store" -v u="$other" '$1 == u && $2 == s'))"
    check "stores --user USER lists that user's segments only" "$other" \
        "$("$bin" --user "$other" --json stores | jq -r '[.[].owner] | unique | join(",")')"
    check "--user USER get" theirs "$("$bin" --user "$other" --store "$store" get secret:1)"
    check "--user USER keys --json" "secret:1 secret:2" \
        "$("$bin" --user "$other" --store "$store" --json keys | jq -r '[.items[].key] | join(" ")')"
    check "--user USER stats --json" 2 "$("$bin" --user "$other" --store "$store" --json stats | jq .entries)"
    check "--user USER del, seen by that user's PHP" "deleted secret:1 NULL" \
        "$("$bin" --user "$other" --store "$store" del secret:1) $(runuser -u "$other" -- php -n -d "extension=$tmp/ephpm.so" -d "ephpm.store_name=$store" -d ephpm.shm_size=4M -r 'var_export((new Ephpm\Kv())->get("secret:1"));')"
    "$bin" --store "$store" get secret:2 >/dev/null 2>&1
    check "without --user, root's own (absent) store: exit 1" 1 "$?"
    runuser -u "$other" -- "$bin" --user root stats 2>"$tmp/err"
    check "a user other than root cannot act as another: exit 1" "1 yes" "$? $(grep -q 'only root' "$tmp/err" && echo yes)"
    check "a user's stores lists its own segments only" "$other" \
        "$(runuser -u "$other" -- "$bin" --json stores | jq -r '[.[].owner] | unique | join(",")')"
    check "--user USER rm-store" "removed $store no" \
        "$("$bin" --user "$other" rm-store "$store") $(ls /dev/shm/ephpm-"$ouid"/"$store" 2>/dev/null || echo no)"
fi
summary operator
