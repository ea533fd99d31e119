#!/usr/bin/env bash
# Another Unix user can neither open a user's store, nor split it in two, nor make it use
# a file or directory it controls: a directory, a symlink or a file planted at the user's
# name in /dev/shm is refused with an error naming the squatter and the fix (a directory
# root makes, ephpm.shm_dir), and nothing is made anywhere else; a squat withdrawn while
# 40 of the victim's processes start never gives them two stores; in the directory root
# made the victim's store, sessions, locks and cluster node work and stay out of the
# squatter's reach. Both users are created by the test and removed at its end.
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

# The squatter goes first: a world-writable directory at the victim's name (and a file at
# the name earlier builds used, /dev/shm/ephpm.UID.STORE). The victim's store refuses with
# the squatter's uid and the fix, and makes nothing anywhere else: one user has one name,
# so nothing a squatter does can give it two stores (userdir.rs).
runuser -u "$other" -- sh -c "umask 0; mkdir /dev/shm/ephpm-$vuid; : > /dev/shm/ephpm.$vuid.$store"
refusal() { # refusal [ini...]: what the victim's first Kv says
    php_as "$victim" 'try { new Ephpm\Kv(); echo "opened"; } catch (Ephpm\StoreException $e) { echo $e->getMessage(); }' "$@"
}
names_the_squatter() { # "yes" when the refusal names the squatter's uid and ephpm.shm_dir
    echo "$1" | grep -q "by uid $(id -u "$other")" && echo "$1" | grep -q "ephpm.shm_dir" && echo yes || echo "$1"
}
check "a squatted directory: refused, naming the squatter's uid and ephpm.shm_dir" yes "$(names_the_squatter "$(refusal)")"
rmdir /dev/shm/ephpm-"$vuid"
ln -s "$tmp/trap" /dev/shm/ephpm-"$vuid"; mkdir "$tmp/trap"; chown -h "$other" /dev/shm/ephpm-"$vuid" "$tmp/trap"; chmod 777 "$tmp/trap"
check "a squatter's symlink at the name: refused the same way" yes "$(names_the_squatter "$(refusal)")"
rm /dev/shm/ephpm-"$vuid"; runuser -u "$other" -- sh -c ": > /dev/shm/ephpm-$vuid"
check "a squatter's file at the name: refused the same way" yes "$(names_the_squatter "$(refusal)")"
check "nothing was made at any other name, nor in the squatter's directory" "0 0" \
    "$(find /dev/shm -maxdepth 1 -name "ephpm-$vuid-*" | wc -l) $(find "$tmp/trap" -mindepth 1 | wc -l)"
mkdir -m 777 "$tmp/open"
check "a parent others may write without the sticky bit: refused" yes \
    "$(refusal -d "ephpm.shm_dir=$tmp/open" | grep -q 'no sticky bit' && echo yes)"

# The fix the error names: a directory only root creates entries in, holding the user's
# directory made by root.
rootshm="$tmp/rootshm"; install -d -m 0755 "$rootshm"; install -d -m 0700 -o "$victim" "$rootshm/ephpm-$vuid"
in_rootshm=(-d "ephpm.shm_dir=$rootshm")
check "the victim's store works in the directory root made for it" "'secret'" \
    "$(php_as "$victim" '$kv = new Ephpm\Kv(); $kv->set("k", "secret"); var_export($kv->get("k"));' "${in_rootshm[@]}")"
check "its segment there is mode 0600 in the 0700 directory" "$victim 700 600" \
    "$(stat -c '%U %a' "$rootshm/ephpm-$vuid") $(stat -c %a "$rootshm/ephpm-$vuid/$store")"
check "the squatter cannot open the victim's segment" denied \
    "$(php_as "$other" "echo @fopen('$rootshm/ephpm-$vuid/$store', 'r') === false ? 'denied' : 'opened';")"
check "the squatter's own Kv sees its own store, not the victim's" NULL \
    "$(php_as "$other" 'var_export((new Ephpm\Kv())->get("k"));')"
check "the victim's MemoLock and native sessions work" "locked 1" \
    "$(php_as "$victim" '$l = (new Ephpm\MemoLock(new Ephpm\Kv()))->acquire("x"); ini_set("session.save_handler", "ephpm"); ini_set("session.use_cookies", 0); session_start(); $_SESSION["n"] = 1; session_write_close(); echo $l ? "locked" : "not locked", " ", count($_SESSION);' "${in_rootshm[@]}")"

# The race: the squatter holds the name while 40 processes of the victim start, and takes
# it away in the middle of them, 20 rounds. Each process that gets a store claims "who"
# with add() and prints who holds it: one store means one answer per round. Earlier
# builds (a sequence of names) settled the first processes in ephpm-UID-1 and the later
# ones in ephpm-UID: two answers.
race_round() {
    rm -rf /dev/shm/ephpm-"$vuid" /dev/shm/ephpm-"$vuid"-*
    runuser -u "$other" -- mkdir /dev/shm/ephpm-"$vuid"
    local i out="$tmp/race.out"; : > "$out"
    for i in $(seq 40); do
        php_as "$victim" 'usleep(random_int(0, 30000)); try { $kv = new Ephpm\Kv(); $kv->add("who", getmypid()); echo "store " . $kv->get("who") . "\n"; } catch (Ephpm\StoreException $e) { echo "refused\n"; }' >> "$out" &
    done
    sleep 0.0$((RANDOM % 3 + 1)); rmdir /dev/shm/ephpm-"$vuid"
    wait
    grep -v -e '^store ' -e '^refused$' "$out" | sed 's/^/# /' >&2
    echo "$(grep '^store ' "$out" | sort -u | wc -l) $(grep -c '^store ' "$out") $(grep -vc -e '^store ' -e '^refused$' "$out")"
}
split=0; none=0; odd=0
for _ in $(seq 20); do
    read -r stores opened other_lines <<< "$(race_round)"
    [ "$stores" -gt 1 ] && split=$((split + 1))
    [ "$opened" -eq 0 ] && none=$((none + 1))
    odd=$((odd + other_lines))
done
check "20 rounds of a squat withdrawn while 40 processes start: never two stores" "0 0" "$split $odd"
check "... and the processes after the withdrawal opened it (in at least 10 rounds)" yes \
    "$([ "$none" -le 10 ] && echo yes || echo "$none rounds without one")"
rm -rf /dev/shm/ephpm-"$vuid"

# The cluster's node socket: the squatter listens at the names a victim's node would use
# in /dev/shm (its directory there, squatted, with the socket in it, and the name earlier
# builds used) and records what arrives. The victim's processes run their own node in the
# directory root made for them; nothing they write reaches the squatter.
runuser -u "$other" -- sh -c "umask 0; mkdir /dev/shm/ephpm-$vuid"
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
    -d ephpm.cluster.enabled=1 -d "ephpm.cluster.secret=$secret" -d "ephpm.cluster.gossip_addr=127.0.0.1:$port" -d ephpm.cluster.node_id=victim "${in_rootshm[@]}")
touch "$log.stop"; wait "$squatter" 2>/dev/null
check "the victim's cluster store works with the squatter listening first" "array ( 0 => true, 1 => false, 2 => 'hunter2-victim', )" \
    "$(echo "$out" | grep -v '^ephpm: cluster node' | tr -s ' \n' ' ' | sed 's/ *$//')"
check "nothing the victim sent reached the squatter's sockets" "" "$(tr -d '\n' < "$log")"
check "the victim's cluster segment is in the directory root made" "$victim" \
    "$(stat -c '%U' "$rootshm/ephpm-$vuid/$cstore.cluster")"
summary users
