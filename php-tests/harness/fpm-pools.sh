#!/usr/bin/env bash
# One php-fpm master, three pools of one user, each with its own
# php_admin_value[ephpm.store_name] (or php_value[ephpm.shm_size]): the settings apply
# per pool exactly as ini_get() reports them. Pools "a" and "c" name the same store and
# share it; pool "b" names another and is isolated from both.
#   php-tests/harness/fpm-pools.sh path/to/ephpm.so
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
so=$(realpath "$1")
find_fpm fpm-pools
tmp=$(mktemp -d)
one="pools_one_$$"; two="pools_two_$$"
pool() { # pool NAME STORE SIZE
    fpm_pool "$1" "$tmp" 2 "php_admin_value[ephpm.store_name] = $2" "php_value[ephpm.shm_size] = $3"
}
{
    printf '[global]\npid = %s/fpm.pid\nerror_log = %s/fpm.log\ndaemonize = no\n' "$tmp" "$tmp"
    pool a "$one" 2M; pool b "$two" 4M; pool c "$one" 2M
} > "$tmp/fpm.conf"
"$fpm" -n -d "extension=$so" -d ephpm.store_name=master_default -y "$tmp/fpm.conf" -R -F &
master=$!
cleanup() {
    kill -QUIT "$master" 2>/dev/null; wait "$master" 2>/dev/null
    rm -rf "$tmp" "/dev/shm/ephpm-$(id -u)/$one" "/dev/shm/ephpm-$(id -u)/$two"
}
trap cleanup EXIT
for p in a b c; do
    for _ in $(seq 100); do [ -S "$tmp/$p.sock" ] && break; sleep 0.05; done
done
cat > "$tmp/app.php" <<'PHP'
<?php
$kv = new Ephpm\Kv();
if (isset($_GET['set'])) { $kv->set('who', $_GET['set']); }
echo ini_get('ephpm.store_name'), ' ', $kv->stats()['memory_size'], ' ', var_export($kv->get('who'), true);
PHP
request() { # request POOL QUERY_STRING -> body
    SCRIPT_FILENAME="$tmp/app.php" SCRIPT_NAME=/app.php REQUEST_METHOD=GET \
        QUERY_STRING="$2" cgi-fcgi -bind -connect "$tmp/$1.sock" 2>/dev/null | sed '1,/^\r\{0,1\}$/d'
}
request a "set=written-by-a" >/dev/null
request b "set=written-by-b" >/dev/null
check "pool a's requests use its php_admin_value store and php_value size" "$one 2097152 'written-by-a'" "$(request a "")"
check "pool c names the same store as pool a: it shares a's data" "$one 2097152 'written-by-a'" "$(request c "")"
check "pool b names another store: it sees only its own" "$two 4194304 'written-by-b'" "$(request b "")"
check "the master's own store_name was never used" "" \
    "$(find /dev/shm -name "*master_default*")"
check "a CLI script naming pool a's store reads what pool a wrote" "'written-by-a'" \
    "$(php -n -d "extension=$so" -d "ephpm.store_name=$one" -d ephpm.shm_size=2M -r 'var_export((new Ephpm\Kv())->get("who"));')"
summary fpm-pools
