#!/usr/bin/env bash
# Deploys that reach every worker (`ephpm deploy`, `ephpm.deploys`): one php-fpm master
# with OPcache (validate_timestamps=0) and three pools of 6 static workers serving
# current/app.php, where current is a symlink to a release folder. The release is
# switched by swapping the symlink; before `ephpm deploy` every worker still serves the
# old release (OPcache and the realpath cache hold it); after it, every request of pools
# a and b (ephpm.deploys on) serves the new one, OPcache invalidated once for the master,
# and pool c (ephpm.deploys off) shows what happens without it: the old release.
#   php-tests/harness/deploy-suite.sh path/to/ephpm.so
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
so=$(realpath "$1")
find_fpm deploy
tmp=$(mktemp -d)
store="deploy_$$"
cli=(php -n -d "extension=$so" -d "ephpm.store_name=$store" -d ephpm.shm_size=4M)
release() { # release NAME: a release folder whose page says NAME
    mkdir -p "$tmp/releases/$1"
    printf "<?php const RELEASE = '%s';\n" "$1" > "$tmp/releases/$1/release.php"
    cat > "$tmp/releases/$1/app.php" <<'PHP'
<?php
require __DIR__ . '/release.php';
echo RELEASE, ' ', ephpm_release();
PHP
}
switch_to() { # switch_to NAME: the symlink swapped atomically, as deploy tools do
    ln -sfn "releases/$1" "$tmp/current.new" && mv -T "$tmp/current.new" "$tmp/current"
}
pool() { # pool NAME DEPLOYS
    fpm_pool "$1" "$tmp" 6 "php_admin_value[ephpm.deploys] = $2"
}
release one; release two; switch_to one
# A worker's phpinfo() (HTML under php-fpm), its row of the release it acted on as text.
cat > "$tmp/info.php" <<'PHP'
<?php
ob_start();
phpinfo(INFO_MODULES);
preg_match('~release acted on by this process\s*</td><td class="v">\s*(\S+)~', ob_get_clean(), $m);
echo 'release acted on by this process => ', $m[1] ?? 'missing';
PHP
{
    printf '[global]\npid = %s/fpm.pid\nerror_log = %s/fpm.log\ndaemonize = no\n' "$tmp" "$tmp"
    pool a 1; pool b 1; pool c 0
} > "$tmp/fpm.conf"
# The realpath cache holds the old release for the whole run, however slow the machine:
# its default TTL (120 s) ran out between the bursts of a loaded run, and pool c then
# resolved the new symlink by itself.
"$fpm" -n -d "extension=$so" -d "ephpm.store_name=$store" -d ephpm.shm_size=4M \
    "${opcache[@]}" -d opcache.enable=1 -d opcache.validate_timestamps=0 -d realpath_cache_ttl=86400 \
    -y "$tmp/fpm.conf" -R -F &
master=$!
cleanup() {
    kill -QUIT "$master" 2>/dev/null; wait "$master" 2>/dev/null
    rm -rf "$tmp" "/dev/shm/ephpm-$(id -u)/$store"
}
trap cleanup EXIT
for p in a b c; do
    for _ in $(seq 100); do [ -S "$tmp/$p.sock" ] && break; sleep 0.05; done
done
request() { # request POOL [SCRIPT] -> body (SCRIPT: the release's app.php)
    SCRIPT_FILENAME="${2:-$tmp/current/app.php}" SCRIPT_NAME=/app.php REQUEST_METHOD=GET \
        cgi-fcgi -bind -connect "$tmp/$1.sock" 2>/dev/null | sed '1,/^\r\{0,1\}$/d'
}
burst() { # burst POOL: 36 requests, 12 at a time (every worker serves some), one line each
    local i pids=()
    for i in $(seq 36); do
        { request "$1"; echo; } > "$tmp/out.$i" &
        pids+=($!)
        # (never a bare `wait`: it would wait for php-fpm's master too)
        [ $((i % 12)) -eq 0 ] && { wait "${pids[@]}"; pids=(); }
    done
    cat "$tmp"/out.*; rm -f "$tmp"/out.*
}
tally() { sort | uniq -c | awk '{ printf "%s%s×%s %s", (NR > 1 ? ", " : ""), $1, $2, $3 }'; }

for p in a b c; do burst "$p" >/dev/null; done
switch_to two
check "after the symlink swap, OPcache (validate_timestamps=0) still serves release one in pool a" "36×one 0" \
    "$(burst a | tally)"
out=$("$root/target/release/ephpm" --store "$store" deploy)
check "ephpm deploy raises the store's release" "release 1" "$out"
for p in a b; do
    check "after ephpm deploy every request of pool $p (ephpm.deploys on) serves release two, none failed" "36×two 1" \
        "$(burst "$p" | tally)"
done
ephpm() { "$root/target/release/ephpm" --store "$store" "$@"; }
check "OPcache was invalidated once for the master: one claim of release 1, its master's, done" "1 1" \
    "$(ephpm keys ephpm:release:1: | grep -c '^"\{0,1\}ephpm:release:1:') $(ephpm get "ephpm:release:1:$(hostname):$master")"
check "pool c (ephpm.deploys off) clears nothing: its requests are what a deploy without it gets" "yes" \
    "$(burst c | grep -q '^one ' && echo yes || echo no)"
out=$("$root/target/release/ephpm" --store "$store" --json deploy)
check "ephpm deploy --json says the new release" '{"release":2}' "$out"
check "a CLI script reads the release with ephpm_release()" "2" "$("${cli[@]}" -r 'echo ephpm_release();')"
check "php --ri ephpm shows the store's release" "release (ephpm deploy) => 2" \
    "$("${cli[@]}" --ri ephpm | grep '^release (ephpm deploy)')"
check "a worker's phpinfo() shows the release it acted on" "release acted on by this process => 2" \
    "$(request a "$tmp/info.php")"
summary deploy
