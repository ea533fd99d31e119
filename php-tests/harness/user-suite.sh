#!/usr/bin/env bash
# Another Unix user can neither open a user's store, nor deny it, nor make it use a
# file or directory it controls: it plants a directory, a symlink and a file at the
# predictable names first, and the victim still works, in a private directory of its
# own; a squatter of every name gets an error naming its uid and the fix. Both users are
# created by the test and removed at its end.
#   php-tests/harness/user-suite.sh path/to/ephpm.so
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
if [ "$(id -u)" != 0 ]; then
    skip "needs root to run processes as other users"; summary users; exit 0
fi
victim=ephpm-test-victim; other=ephpm-test-other
for u in "$victim" "$other"; do
    id "$u" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$u"
done
vuid=$(id -u "$victim")
tmp=$(mktemp -d); chmod 755 "$tmp"
cp "$1" "$tmp/ephpm.so"; chmod 644 "$tmp/ephpm.so"
store="users_$$"
cleanup() {
    rm -rf "$tmp" /dev/shm/ephpm-"$vuid" /dev/shm/ephpm-"$vuid"-* /dev/shm/ephpm."$vuid"."$store" /dev/shm/ephpm-"$(id -u "$other")"*
    userdel "$victim" 2>/dev/null; userdel "$other" 2>/dev/null
}
trap cleanup EXIT
php_as() { # php_as USER CODE [ini...]
    local u=$1 code=$2; shift 2
    runuser -u "$u" -- php -n -d "extension=$tmp/ephpm.so" -d "ephpm.store_name=$store" -d ephpm.shm_size=2M "$@" -r "$code" 2>&1
}

# The squatter goes first: a world-writable directory, a symlink to a directory it
# owns, and a file, at the first three names of the victim's sequence, and a file at
# the name earlier builds used (/dev/shm/ephpm.UID.STORE), which denied those builds.
mkdir "$tmp/trap"; chown "$other" "$tmp/trap"; chmod 777 "$tmp/trap"
runuser -u "$other" -- sh -c "umask 0; mkdir /dev/shm/ephpm-$vuid; \
    ln -s $tmp/trap /dev/shm/ephpm-$vuid-1; : > /dev/shm/ephpm-$vuid-2; : > /dev/shm/ephpm.$vuid.$store"
check "the victim's store works despite the planted names" "'secret'" \
    "$(php_as "$victim" '$kv = new Ephpm\Kv(); $kv->set("k", "secret"); var_export($kv->get("k"));')"
check "its segment is in the first name it owns, mode 0700, the file 0600" "$victim 700 600" \
    "$(stat -c '%U %a' /dev/shm/ephpm-"$vuid"-3) $(stat -c %a /dev/shm/ephpm-"$vuid"-3/"$store")"
check "nothing went into the squatter's directories" "0 0" \
    "$(find /dev/shm/ephpm-"$vuid" -mindepth 1 | wc -l) $(find "$tmp/trap" -mindepth 1 | wc -l)"
check "the squatter cannot open the victim's segment" denied \
    "$(php_as "$other" "echo @fopen('/dev/shm/ephpm-$vuid-3/$store', 'r') === false ? 'denied' : 'opened';")"
check "the squatter's own Kv sees its own store, not the victim's" NULL \
    "$(php_as "$other" 'var_export((new Ephpm\Kv())->get("k"));')"
# Sessions and MemoLock of the victim work too.
check "the victim's MemoLock and native sessions work" "locked 1" \
    "$(php_as "$victim" '$l = (new Ephpm\MemoLock(new Ephpm\Kv()))->acquire("x"); ini_set("session.save_handler", "ephpm"); ini_set("session.use_cookies", 0); session_start(); $_SESSION["n"] = 1; session_write_close(); echo $l ? "locked" : "not locked", " ", count($_SESSION);')"

# Every name of the sequence squatted: an error that names the squatter and the fix,
# and the fix (a directory of the victim's own) works.
rm -rf /dev/shm/ephpm-"$vuid"-3
runuser -u "$other" -- sh -c "for i in \$(seq 3 63); do mkdir /dev/shm/ephpm-$vuid-\$i; done"
out=$(php_as "$victim" 'try { new Ephpm\Kv(); echo "opened"; } catch (Ephpm\StoreException $e) { echo $e->getMessage(); }')
check "all names squatted: the error names the squatter's uid and ephpm.shm_dir" yes \
    "$(echo "$out" | grep -q "by uid $(id -u "$other")" && echo "$out" | grep -q "ephpm.shm_dir" && echo yes || echo "$out")"
mkdir "$tmp/victim-shm"; chown "$victim" "$tmp/victim-shm"; chmod 700 "$tmp/victim-shm"
check "with ephpm.shm_dir set to its own directory the victim works again" "'ok'" \
    "$(php_as "$victim" '$kv = new Ephpm\Kv(); $kv->set("k", "ok"); var_export($kv->get("k"));' -d "ephpm.shm_dir=$tmp/victim-shm")"

# The cluster's node socket: the squatter listens at the names a victim's node could use
# (a directory of the victim's sequence with the socket in it, and the name earlier
# builds used) and records what arrives. The victim's processes run their own node in
# their own private directory; nothing they write reaches the squatter.
rm -rf /dev/shm/ephpm-"$vuid"-*
cstore="cusers_$$"; log="$tmp/trap/received.log"
runuser -u "$other" -- php -n -r '
    $paths = array_slice($argv, 1); $log = array_shift($paths); $servers = [];
    foreach ($paths as $p) { @unlink($p); $servers[] = stream_socket_server("unix://$p"); chmod($p, 0777); }
    touch($log); $end = microtime(true) + 60;
    while (microtime(true) < $end && !file_exists("$log.stop")) {
        $r = $servers; $w = $e = null;
        if (@stream_select($r, $w, $e, 0, 200000) > 0) {
            foreach ($r as $s) { $c = @stream_socket_accept($s, 0); if ($c) { file_put_contents($log, fread($c, 65536) . "\n", FILE_APPEND); } }
        }
    }' "$log" "/dev/shm/ephpm-$vuid/$cstore.cluster.sock" "/dev/shm/ephpm.$vuid.$cstore.cluster.sock" &
squatter=$!
for _ in $(seq 100); do [ -S "/dev/shm/ephpm-$vuid/$cstore.cluster.sock" ] && break; sleep 0.05; done
secret=dXNlci1zdWl0ZS1jbHVzdGVyLXNlY3JldC0xMjgtYml0cw
port=$((20000 + RANDOM % 20000))
out=$(php_as "$victim" '$kv = new Ephpm\Kv("cluster://'"$cstore"'?timeout=10");
    $kv->set("password", "hunter2-victim"); var_export([$kv->add("lock", "mine", 30), $kv->add("lock", "again", 30), $kv->get("password")]);' \
    -d ephpm.cluster.enabled=1 -d "ephpm.cluster.secret=$secret" -d "ephpm.cluster.gossip_addr=127.0.0.1:$port" -d ephpm.cluster.node_id=victim)
touch "$log.stop"; wait "$squatter" 2>/dev/null
check "the victim's cluster store works with the squatter listening first" "array ( 0 => true, 1 => false, 2 => 'hunter2-victim', )" \
    "$(echo "$out" | grep -v '^ephpm: cluster node' | tr -s ' \n' ' ' | sed 's/ *$//')"
check "nothing the victim sent reached the squatter's sockets" "" "$(tr -d '\n' < "$log")"
check "the victim's cluster segment (and its node's socket) are in its own private directory" "$victim 700" \
    "$(stat -c '%U %a' "$(dirname "$(ls /dev/shm/ephpm-"$vuid"-*/"$cstore".cluster)")")"
summary users
