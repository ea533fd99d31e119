#!/usr/bin/env bash
# Operating ephpm: the `ephpm` CLI against a live store written by PHP (every command,
# its --json, its refusals, as root on another user's store), the status page served by
# php-fpm behind nginx and opened in headless Chromium (its numbers are Kv::stats()'s, no
# console error, a screenshot in target/status-page.png (and docs/status-page.png, the
# README's, when missing or with UPDATE_SCREENSHOT=1), refused without the
# allowlist or the password, off with a 500 for an allowlist entry that is not exactly
# an address or CIDR block, never framed), and the metrics endpoint parsed by Python's
# prometheus_client (installed into target/pyenv if missing) with the same numbers, and
# key prefixes that are not UTF-8 or carry escapes as valid labels. Issue 27 item 9 and
# 10: the page's time base, rates since the previous look, ephpm.* settings (a secret
# never shown), per-shard bars, largest entries, the key browser (find by prefix, keys
# with NUL bytes shown escaped, deleted exactly by a POST with the page's token and by
# nothing else: GET, no token, a wrong one, another site, another address, another
# store's token), ?refresh=N bounded; two stores on one page (this host's and a
# redis-server of the suite's own on a unix socket) with Redis' own figures and "not
# counted" for what it has not; the metrics' store label on every series, ephpm_up per
# store (0 for one that cannot be reached), and lock-wait counters that move on both.
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
    [ -f "$tmp/redis.pid" ] && kill "$(cat "$tmp/redis.pid")" 2>/dev/null
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
check "--help: the usage on stdout, exit 0" "0 usage: yes" \
    "$? $(grep -q '^Usage: ephpm \[OPTIONS\] <COMMAND>' "$tmp/out" && echo usage:) $([ -s "$tmp/err" ] && echo no || echo yes)"
"$bin" >"$tmp/out" 2>"$tmp/err"
check "no command: exit 2, the usage on stderr, nothing on stdout" "2 yes 0" \
    "$? $(grep -q '^Usage: ephpm' "$tmp/err" && echo yes) $(wc -c <"$tmp/out")"
"$bin" stats --frob 2>"$tmp/err"
check "an unknown option: exit 2" "2 error: unexpected argument '--frob' found" "$? $(head -1 "$tmp/err")"
"$bin" get 2>"$tmp/err"
check "get without a key: exit 2, the missing argument named" "2 <KEY>" "$? $(sed -n 2p "$tmp/err" | tr -d ' ')"
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

# Kv::stats()'s not_counted (what the backend does not count) is for the status page.
check "stats --json is Kv::stats()" "$(jq -S 'del(.not_counted)' <<<"$stats")" "$(cli --json stats | jq -S .)"
check "stats: the same numbers as text" "$(jq -r 'to_entries[] | select(.key != "shard_fill" and .key != "not_counted") | "\(.key) \(.value)"' <<<"$stats")" \
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
fpm=$(fpm_binary)
if [ -z "$fpm" ] || ! command -v nginx >/dev/null || ! command -v chromium >/dev/null || ! command -v cgi-fcgi >/dev/null; then
    skip "php-fpm, nginx, cgi-fcgi or chromium is missing: the status page and metrics are not tested"
else
    start_redis "$tmp"   # the second store of the multi-store page, stopped in cleanup
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
    # A cluster secret in php-fpm's settings: the page says it is set, never shows it.
    "$fpm" "${ini[@]}" -d ephpm.cluster.secret=hunter2-secret-0123456789 -y "$tmp/fpm.conf" -R -F &
    pids+=($!)
    port=$((20000 + RANDOM % 20000))
    mkdir "$tmp/nginx"
    location() { # location URL SCRIPT POOL [STORES]: STORES, the EPHPM_STATUS_DSN list, on the pool off
        printf 'location = %s { include /etc/nginx/fastcgi_params; fastcgi_param SCRIPT_FILENAME %s/php/%s; %sfastcgi_pass unix:%s/%s.sock; }\n' \
            "$1" "$root" "$2" "${4:+fastcgi_param EPHPM_STATUS_DSN \"$4\"; fastcgi_param EPHPM_STATUS_ALLOW 127.0.0.1; }" "$tmp" "$3"
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
    $(location /multi/status.php status.php off "shm://$store unix://$tmp/redis.sock")
    $(location /multi/metrics.php metrics.php off "shm://$store unix://$tmp/redis.sock")
    $(location /down/metrics.php metrics.php off "unix://$tmp/nothere.sock shm://$store")
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
    cat >"$tmp/dom.py" <<'PY'
import html.parser, sys
class P(html.parser.HTMLParser):
    """One line per figure, "sN:KEY=VALUE" for the Nth store's (and "KEY=VALUE" too for the
    first store's and the page's own): KEY is a data-metric, "prefix P NAME" / "L NAME" /
    "ini NAME ini" inside a prefix's, a lock's or a setting's row, METRIC.delta and
    METRIC.seconds for a rate's increase and its basis' seconds; "shard I" (used size
    entries), "largest I" (the key as shown), "key HEX" (the key as shown), "token" (the
    key browser's form), "meta-refresh" (the refresh header's content), "link NAME"."""
    def __init__(self):
        super().__init__(); self.rows = []; self.out = {}; self.text = None; self.store = 0
    def put(self, key, value):
        self.out.setdefault(f"s{self.store}:{key}", value)
        if self.store == 0: self.out.setdefault(key, value)
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-store-index" in a: self.store = int(a["data-store-index"])
        if tag == "meta" and a.get("http-equiv") == "refresh": self.put("meta-refresh", a["content"])
        if tag == "a" and "data-link" in a: self.put("link " + a["data-link"], a["href"])
        if tag == "input" and a.get("name") == "token": self.put("token", a["value"])
        if "data-shard" in a: self.put("shard " + a["data-shard"], f"{a['data-used']} {a['data-size']} {a['data-entries']}")
        if tag == "tr":
            self.rows.append(f"prefix {a['data-prefix']} " if "data-prefix" in a
                             else f"{a['data-lock']} " if "data-lock" in a
                             else f"ini {a['data-ini']} " if "data-ini" in a
                             else f"largest {a['data-largest']}" if "data-largest" in a
                             else f"key {a['data-key']}" if "data-key" in a else "")
        if tag == "td" and a.get("class") == "key" and self.rows: self.text = self.rows[-1]
        m = a.get("data-metric")
        if m:
            key = (self.rows[-1] if self.rows else "") + m
            if "data-value" in a:
                self.put(key, a["data-value"])
                if "data-delta" in a: self.put(key + ".delta", a["data-delta"])
                if "data-seconds" in a: self.put(key + ".seconds", a["data-seconds"])
            else:
                self.text = key
    def handle_endtag(self, tag):
        if tag == "tr" and self.rows: self.rows.pop()
    def handle_data(self, d):
        if self.text: self.put(self.text, d); self.text = None
p = P(); p.feed(open(sys.argv[1]).read())
for k, v in p.out.items(): print(f"{k}={v}")
PY
    python3 "$tmp/dom.py" "$tmp/dom.html" >"$tmp/dom.txt"
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

    # --- issue 27 item 9: what an operator runs a host on ---------------------------
    page() { # page URL: Chromium's DOM of it, parsed into $tmp/dom.txt (see dom.py)
        "${chrome[@]}" --dump-dom "$1" >"$tmp/dom.html" 2>>"$tmp/chrome.log"
        python3 "$tmp/dom.py" "$tmp/dom.html" >"$tmp/dom.txt"
    }
    after=$(kvstats)
    check "time base: the store's age, no more than Kv::stats() says after the page" yes \
        "$([ -n "$(dom age_seconds)" ] && [ "$(dom age_seconds)" -le "$(jq .age_seconds <<<"$after")" ] && echo yes)"
    check "the largest item a write can store is Kv::stats()'s" "$(jq .max_item_size <<<"$after")" "$(dom max_item_size)"
    check "a first look's rates are averages since the store began counting" start "$(dom rate_basis)"
    check "one bar per shard, each shard's used, size and entries as Kv::stats()'s shard_fill" \
        "$(jq -r '.shard_fill | to_entries[] | "shard \(.key)=\(.value | map(tostring) | join(" "))"' <<<"$after" | paste -sd'|')" \
        "$(grep '^shard ' "$tmp/dom.txt" | paste -sd'|')"
    check "the ephpm.* settings in effect: store_name, shm_size; the cluster secret said set, never shown" \
        "$store 16M (set) 0" \
        "$(dom "ini ephpm.store_name ini") $(dom "ini ephpm.shm_size ini") $(dom "ini ephpm.cluster.secret ini") $(grep -c 'hunter2-secret' "$tmp/dom.html")"

    # Rates since the previous look: the page's own link carries its counters; 7 gets later
    # the next page says +7 hits, over the seconds between the two looks.
    next=$(dom "link measure" | sed 's/&amp;/\&/g')
    # (stats() in the reading process: its lock-free reads reach the shared counters when
    # it next holds their shard's lock, src/store/shm/tally.rs.)
    php_ '$kv = new Ephpm\Kv(); for ($i = 0; $i < 7; $i++) { $kv->get("page:1"); } $kv->stats();'
    page "$url/status.php$next"
    check "rates since the previous look: basis, +7 hits, hits/s x seconds = 7" "previous 7 7" \
        "$(dom rate_basis) $(dom hits_per_second.delta) $(awk -v r="$(dom hits_per_second)" -v s="$(dom rate_basis.seconds)" 'BEGIN { printf "%d", r * s + 0.5 }')"

    # Largest entries and the key browser, with keys Symfony's tags write (NUL and control
    # bytes) and markup.
    php_ '$kv = new Ephpm\Kv(); $kv->set("big:blob", str_repeat("z", 3000)); $kv->set("tag\0\x01:t", "<b>1</b>", 300); $kv->set("tag\0\x02:t", 2); $kv->set("tag<i>:x", 3);'
    page "$url/status.php"
    check "the largest entry first, with its size" "big:blob 3000" "$(dom "largest 0") $(dom "largest 0size")"
    page "$url/status.php?store=0&find=tag"
    hex1=$(printf 'tag\0\001:t' | xxd -p); hex2=$(printf 'tag\0\002:t' | xxd -p)
    check "find by prefix: the three tag keys, escaped, never raw, addressed in hex" \
        "key $hex1=tag\\x00\\x01:t|key $hex2=tag\\x00\\x02:t|key $(printf 'tag<i>:x' | xxd -p)=tag<i>:x|3 0 0" \
        "$(grep '^key [0-9a-f]*=' "$tmp/dom.txt" | paste -sd'|')|$(dom found) $(grep -c '<i>' "$tmp/dom.html") $(tr -d '\n' <"$tmp/dom.html" | grep -c '[[:cntrl:]]')"
    row=$(tr -d '\n' <"$tmp/dom.html" | grep -oE "data-key=\"$hex1\">.{0,400}" | head -1)
    check "a key's TTL and size in the browser" "yes 8" \
        "$(grep -qE '</td><td>(29[0-9]|300)\.[0-9] s</td>' <<<"$row" && echo yes) $(grep -oE 'data-metric="size" data-value="[0-9]+"' <<<"$row" | head -1 | tr -dc 0-9)"
    token=$(dom token)
    exists() { php "${ini[@]}" -r 'echo (new Ephpm\Kv())->has(hex2bin($argv[1])) ? "kept" : "gone";' "$1"; }
    post() { # post QUERY BODY [CURL ARGS...] -> the status code
        curl -s -o "$tmp/post.out" -w '%{http_code}' -X POST --data "$2" "${@:3}" "$url/status.php?$1"
    }
    check "GET with a key and a good token deletes nothing (the page)" "200 kept" \
        "$(curl -s -o /dev/null -w '%{http_code}' "$url/status.php?store=0&find=tag&key=$hex1&token=$token") $(exists "$hex1")"
    check "POST without a token: 403, deletes nothing" "403 kept" "$(post 'store=0&find=tag' "key=$hex1") $(exists "$hex1")"
    check "POST with a wrong token: 403, deletes nothing" "403 kept" \
        "$(post 'store=0&find=tag' "key=$hex1&token=${token%?}$([ "${token: -1}" = 0 ] && echo 1 || echo 0)") $(exists "$hex1")"
    check "POST with the good token from another site (Origin): 403, deletes nothing" "403 kept" \
        "$(post 'store=0&find=tag' "key=$hex1&token=$token" -H 'Origin: http://evil.example') $(exists "$hex1")"
    check "POST with the good token, from an address the allowlist refuses: 403, deletes nothing" "403 kept" \
        "$(env SCRIPT_FILENAME="$root/php/status.php" SCRIPT_NAME=/status.php REQUEST_METHOD=POST QUERY_STRING='store=0&find=tag' REMOTE_ADDR=10.9.9.9 \
            CONTENT_TYPE=application/x-www-form-urlencoded CONTENT_LENGTH=$((${#hex1} + ${#token} + 11)) \
            cgi-fcgi -bind -connect "$tmp/on.sock" <<<"key=$hex1&token=$token" 2>/dev/null | sed -n 's/^Status: \([0-9]*\).*/\1/p') $(exists "$hex1")"
    check "POST with the good token: 303 back to the list, that key gone, its neighbour kept" "303 gone kept" \
        "$(post 'store=0&find=tag' "key=$hex1&token=$token") $(exists "$hex1") $(exists "$hex2")"
    page "$url/status.php?$(sed -n 's/^Location: ?\(.*\)\r$/\1/p' <(curl -s -D - -o /dev/null -X POST --data "key=$hex2&token=$token" "$url/status.php?store=0&find=tag"))"
    check "the page it goes back to says what was deleted, escaped" "1 tag\\x00\\x02:t was deleted. 1" \
        "$(dom deleted) $(sed -n 's/.*data-metric="deleted" data-value="1">\([^<]*\)<.*/\1/p' "$tmp/dom.html") $(dom found)"
    curl -s -D "$tmp/head" -o /dev/null "$url/status.php"
    check "the page's CSP lets its forms post to itself only" yes "$(grep -qi "^Content-Security-Policy:.*form-action 'self'" "$tmp/head" && echo yes)"

    # Auto-refresh, bounded.
    for r in "1 2" "30 30" "999999 3600"; do
        page "$url/status.php?refresh=${r% *}"
        check "?refresh=${r% *}: refreshed every ${r#* } s, the reload keeps it and carries this look" "${r#* } yes ${r#* }" \
            "$(dom refresh) $(dom meta-refresh | grep -q "^${r#* }; url=?refresh=${r#* }&amp;since=\|^${r#* }; url=?refresh=${r#* }&since=" && echo yes) $(dom meta-refresh | cut -d';' -f1)"
    done
    page "$url/status.php?refresh=soon"
    check "?refresh=soon: no refresh" "|" "$(dom refresh)|$(dom meta-refresh)"

    # Two stores on one page (EPHPM_STATUS_DSN, a list): this host's and a Redis server
    # with no maxmemory, whose figures are the server's, and "not counted" what it has not.
    rsock="$tmp/redis.sock"
    php "${ini[@]}" -d ephpm.dsn="unix://$rsock" -r '$kv = new Ephpm\Kv(); $kv->set("r:1", str_repeat("r", 700)); $kv->set("tag\0\x03:r", 1); $kv->get("r:1"); $kv->get("r:none");'
    page "$url/multi/status.php"
    rinfo() { redis-cli -s "$rsock" info all | tr -d '\r' | sed -n "s/^$1://p"; }
    check "two stores on one page, each named by its DSN" "2 shm://$store unix://$rsock" \
        "$(dom stores) $(sed -n 's/.*data-store-index="0" data-store="\([^"]*\)".*/\1/p' "$tmp/dom.html") $(sed -n 's/.*data-store-index="1" data-store="\([^"]*\)".*/\1/p' "$tmp/dom.html")"
    check "the first store's entries are Kv::stats()'s" "$(jq .entries <<<"$(kvstats)")" "$(dom s0:entries)"
    check "Redis: its keys (DBSIZE), no maxmemory said as no limit, free memory not counted" \
        "$(redis-cli -s "$rsock" dbsize) 0 no limit  not counted" \
        "$(dom s1:entries) $(dom s1:memory_size) $(sed -n 's/.*data-store-index="1".*data-metric="memory_size" data-value="0">\([^<]*\)<.*/\1/p' "$tmp/dom.html" | head -1) $(dom s1:memory_free) $(tr -d '\n' <"$tmp/dom.html" | sed 's/.*data-store-index="1"//' | grep -o 'data-metric="memory_free" data-value="">[^<]*' | sed 's/.*>//')"
    check "Redis: memory used is the server's (used_memory, within a MiB of it read after), uptime no more than its own" "yes yes" \
        "$(awk -v a="$(dom s1:memory_used)" -v b="$(rinfo used_memory)" 'BEGIN { d = a - b; if (a > 0 && d < 1048576 && d > -1048576) print "yes" }') $([ "$(dom s1:age_seconds)" -le "$(rinfo uptime_in_seconds)" ] && echo yes)"
    check "Redis: hits and misses are the server's, the largest item is proto-max-bulk-len" "yes $(redis-cli -s "$rsock" config get proto-max-bulk-len | tail -1)" \
        "$([ "$(dom s1:hits)" -ge 1 ] && [ "$(dom s1:hits)" -le "$(rinfo keyspace_hits)" ] && [ "$(dom s1:misses)" -ge 1 ] && echo yes) $(dom s1:max_item_size)"
    check "Redis: evictions by class, repairs, resets, shard locks, shard fill: not counted (no 0 shown)" "|||||| 1 servers (masters)" \
        "$(dom s1:evictions_cache)|$(dom s1:evictions_session)|$(dom s1:repairs)|$(dom s1:resets)|$(dom s1:shards_locked)|$(dom s1:shard_fill)| $(dom s1:shards) $(tr -d '\n' <"$tmp/dom.html" | sed 's/.*data-store-index="1"//' | grep -o '<th>servers (masters)</th>' | sed 's/<[^>]*>//g')"
    check "Redis: the largest entry among its keys" "r:1" "$(dom s1:"largest 0")"
    page "$url/multi/status.php?store=1&find=tag"
    rhex=$(printf 'tag\0\003:r' | xxd -p)
    check "the key browser on the second store: its key, escaped" "key $rhex=tag\\x00\\x03:r" "$(grep '^s1:key [0-9a-f]*=' "$tmp/dom.txt" | sed 's/^s1://')"
    code=$(curl -s -o /dev/null -w '%{http_code}' -X POST --data "key=$rhex&token=$(dom s1:token)" "$url/multi/status.php?store=1&find=tag")
    check "deleted there with its token: 303, gone from Redis" "303 gone" \
        "$code $(php "${ini[@]}" -d ephpm.dsn="unix://$rsock" -r 'echo (new Ephpm\Kv())->has(hex2bin($argv[1])) ? "kept" : "gone";' "$rhex")"
    rtoken=$(dom s1:token)
    page "$url/multi/status.php?store=0&find=page"
    code=$(curl -s -o /dev/null -w '%{http_code}' -X POST --data "key=$(printf 'page:1' | xxd -p)&token=$rtoken" "$url/multi/status.php?store=0&find=page")
    check "a token of one store's browser deletes nothing in another" "403 kept" "$code $(exists "$(printf 'page:1' | xxd -p)")"
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
        # parse_metrics FILE: its samples as "TYPE NAME{LABELS} VALUE" lines in
        # $tmp/metrics.parsed, parsed by prometheus_client; its status is the parser's.
        parse_metrics() {
            "$py" - "$1" >"$tmp/metrics.parsed" 2>&1 <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
for fam in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in fam.samples:
        labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
        value = int(s.value) if s.value == int(s.value) else s.value
        print(f"{fam.type} {s.name}{{{labels}}} {value}")
PY
        }
        # Key prefixes any client may choose (a session id from a cookie, a cache key):
        # invalid UTF-8, and a quote, a backslash, a newline and an escape.
        php_ '$kv = new Ephpm\Kv(); $kv->set("evil\xff\xfe:1", 1); $kv->set("ev\"il\\x\n\x1b[2J:1", 1);'
        curl -s -D "$tmp/metrics.head" "$url/metrics.php" >"$tmp/metrics.txt"
        stats=$(kvstats)
        check "metrics: Prometheus' content type" "text/plain; version=0.0.4; charset=utf-8" \
            "$(sed -n 's/^Content-Type: \(.*\)\r$/\1/p' "$tmp/metrics.head")"
        parse_metrics "$tmp/metrics.txt"
        check "metrics parse with prometheus_client" 0 "$?"
        sl="shm://$store"   # the store label of the pool's default store
        metric() { awk -v k="$1 $2 " 'index($0, k) == 1 { print substr($0, length(k) + 1) }' "$tmp/metrics.parsed"; }
        want=$(jq -r '"\(.memory_size) \(.memory_used) \(.entries) \(.hits) \(.misses) \(.evictions) \(.expirations) \(.repairs) \(.resets) \(.shards)"' <<<"$stats")
        got="$(metric gauge "ephpm_memory_bytes{kind=size,store=$sl}") $(metric gauge "ephpm_memory_bytes{kind=used,store=$sl}") $(metric gauge "ephpm_entries{store=$sl}")"
        for c in hits misses evictions expirations repairs resets; do got+=" $(metric counter "ephpm_${c}_total{store=$sl}")"; done
        got+=" $(metric gauge "ephpm_shards{store=$sl}")"
        check "metrics: every number is Kv::stats()'s (counters typed counter)" "$want" "$got"
        got=""; for c in lock_waits lock_timeouts stampedes_avoided full_refusals; do got+="$(metric counter "ephpm_${c}_total{store=$sl}") "; done
        check "metrics: lock waits, lock timeouts, stampedes avoided, store-full refusals are Kv::stats()'s" \
            "$(jq -r '"\(.lock_waits) \(.lock_timeouts) \(.stampedes_avoided) \(.full_refusals) "' <<<"$stats")" "$got"
        check "metrics: the store's age and maximum item size" "$(jq -r '"\(.max_item_size) yes"' <<<"$stats")" \
            "$(metric gauge "ephpm_max_item_size_bytes{store=$sl}") $([ "$(metric gauge "ephpm_age_seconds{store=$sl}")" -ge 1 ] && echo yes)"
        check "metrics: locks held, sessions, entries of prefix page" "1 1 5" \
            "$(metric gauge "ephpm_locks_held{store=$sl}") $(metric gauge "ephpm_sessions{store=$sl}") $(metric gauge "ephpm_prefix_entries{prefix=page,store=$sl}")"
        check "metrics: the scrape is UTF-8; hostile prefixes are series of their own, bytes as \\xNN, a backslash doubled" \
            "yes 1 1" \
            "$(python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$tmp/metrics.txt" && echo yes) $(grep -cxF 'gauge ephpm_prefix_entries{prefix=evil\xff\xfe,store='"$sl"'} 1' "$tmp/metrics.parsed") $(grep -cxF 'gauge ephpm_prefix_entries{prefix=ev"il\\x\x0a\x1b[2J,store='"$sl"'} 1' "$tmp/metrics.parsed")"

        # The two stores' metrics: every series labelled by its store, ephpm_up for each,
        # Redis' own figures and nothing for what it does not count; its lock-wait
        # counter moves with a lock wait on it.
        scrape_multi() {
            curl -s "$url/multi/metrics.php" >"$tmp/multi.txt"
            parse_metrics "$tmp/multi.txt"
        }
        scrape_multi
        rl="unix://$rsock"
        check "metrics of two stores parse with prometheus_client; every sample has a store label, of one of the two" "0 yes" \
            "$? $(cut -d' ' -f2- "$tmp/metrics.parsed" | grep -vcE "store=(shm://$store|unix://$rsock)[,}]" | grep -qx 0 && echo yes)"
        check "ephpm_up is 1 for each store" "1 1" "$(metric gauge "ephpm_up{store=$sl}") $(metric gauge "ephpm_up{store=$rl}")"
        check "Redis: entries are its DBSIZE, no size series without maxmemory, used memory its own" "$(redis-cli -s "$rsock" dbsize)  yes" \
            "$(metric gauge "ephpm_entries{store=$rl}") $(metric gauge "ephpm_memory_bytes{kind=size,store=$rl}") $([ "$(metric gauge "ephpm_memory_bytes{kind=used,store=$rl}")" -gt 0 ] && echo yes)"
        check "Redis: no series for repairs, resets, shards locked; lock and stampede counters there" "|||0 0 0" \
            "$(metric counter "ephpm_repairs_total{store=$rl}")|$(metric counter "ephpm_resets_total{store=$rl}")|$(metric gauge "ephpm_shards_locked{store=$rl}")|$(metric counter "ephpm_lock_timeouts_total{store=$rl}") $(metric counter "ephpm_stampedes_avoided_total{store=$rl}") $(metric counter "ephpm_full_refusals_total{store=$rl}")"
        before=$(metric counter "ephpm_lock_waits_total{store=$rl}")
        php "${ini[@]}" -d ephpm.dsn="unix://$rsock" -r '$l = new Ephpm\MemoLock(); $h = $l->acquire("job", 30000); $l->acquire("job", null, 50);'
        scrape_multi
        check "Redis: a lock wait there moves ephpm_lock_waits_total and ephpm_lock_timeouts_total by one" "1 1" \
            "$(( $(metric counter "ephpm_lock_waits_total{store=$rl}") - before )) $(metric counter "ephpm_lock_timeouts_total{store=$rl}")"
        before=$(metric counter "ephpm_lock_waits_total{store=$sl}")
        php_ '$l = new Ephpm\MemoLock(); $h = $l->acquire("job2", 30000); $l->acquire("job2", null, 50);'
        scrape_multi
        check "shm: a lock wait moves ephpm_lock_waits_total by one" 1 "$(( $(metric counter "ephpm_lock_waits_total{store=$sl}") - before ))"
        curl -s "$url/down/metrics.php" >"$tmp/down.txt"
        check "a store that cannot be reached: ephpm_up 0 for it, the other store's series stay" "ephpm_up{store=\"unix://$tmp/nothere.sock\"} 0 yes" \
            "$(grep -F 'nothere' "$tmp/down.txt" | grep '^ephpm_up') $(grep -qF "ephpm_entries{store=\"shm://$store\"}" "$tmp/down.txt" && echo yes)"
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
