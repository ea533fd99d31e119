#!/usr/bin/env bash
# ephpm-resp with real Redis clients on the same store as PHP, in one test: redis-cli,
# phpredis, Predis, redis-py (from PyPI, into target/pyenv) and node-redis (from npm,
# into target/node): what one writes the others read, INCR and Kv::increment count on
# one counter, and a lock taken by a Redis client excludes a MemoLock of the same name
# and the other way round, with fencing numbers that keep growing.
#   php-tests/harness/resp-suite.sh path/to/ephpm.so
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
so=$(realpath "$1")
tmp=$(mktemp -d)
store="resp_suite_$$"
sock="/dev/shm/ephpm-$(id -u)/$store.resp.sock"
"$root/target/release/ephpm-resp" --store "$store" --shm-size 16M 2>"$tmp/resp.log" &
server=$!
cleanup() {
    kill "$server" 2>/dev/null; wait "$server" 2>/dev/null
    rm -rf "$tmp" "/dev/shm/ephpm-$(id -u)/$store" "$sock"
}
trap cleanup EXIT
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
php_() { php -n -d "extension=$so" -d "ephpm.store_name=$store" -d ephpm.shm_size=16M -r "$1"; }
phpredis_() { php -n -d "extension=$so" -d extension=igbinary -d extension=redis -d "ephpm.store_name=$store" -d ephpm.shm_size=16M -r "\$r = new Redis(); \$r->connect('$sock'); $1"; }
predis_() { php -n -d "extension=$so" -d "ephpm.store_name=$store" -d ephpm.shm_size=16M -r "require '/usr/share/php/Predis/autoload.php'; \$p = new Predis\Client('unix://$sock'); $1"; }
cli() { redis-cli -s "$sock" "$@"; }

# redis-cli and PHP.
cli SET from:cli "written by redis-cli" >/dev/null
check "PHP reads what redis-cli wrote" "written by redis-cli" "$(php_ 'echo (new Ephpm\Kv())->get("from:cli");')"
php_ '$kv = new Ephpm\Kv(); $kv->set("from:php", "written by PHP"); $kv->set("php:int", 41); $kv->set("php:arr", [1]);'
check "redis-cli reads what PHP wrote" "written by PHP" "$(cli GET from:php)"
check "an int PHP stored is a decimal string to redis-cli" "41" "$(cli GET php:int)"
check "an array PHP stored shows as its serialized bytes, never a crash" "a:1:{i:0;i:1;}" "$(cli GET php:arr)"
check "redis-cli's INCR counts on PHP's integer" "42" "$(cli INCR php:int)"
check "Kv::increment counts on after it" "int(50)" "$(php_ 'var_dump((new Ephpm\Kv())->increment("php:int", 8));')"
check "TYPE says string" "string" "$(cli TYPE php:arr)"

# phpredis and Predis on the same store.
check "phpredis reads redis-cli's and PHP's writes" "written by redis-cli|written by PHP|50" \
    "$(phpredis_ 'echo $r->get("from:cli"), "|", $r->get("from:php"), "|", $r->get("php:int");')"
phpredis_ '$r->set("from:phpredis", "pr"); $r->setEx("ttl:phpredis", 100, "x"); $r->incrBy("php:int", 10);'
check "Predis reads phpredis's writes, counter and lifetime" "pr|60|100" \
    "$(predis_ 'echo $p->get("from:phpredis"), "|", $p->get("php:int"), "|", $p->ttl("ttl:phpredis");')"
predis_ '$p->mset(["predis:a" => "1", "predis:b" => "2"]); $p->set("predis:nx", "first", "EX", 100, "NX");'
check "Kv reads Predis's MSET; a second SET NX and Kv::add lose to the first" "1 2 lost first false" \
    "$(predis_ '$kv = new Ephpm\Kv(); $second = $p->set("predis:nx", "second", "EX", 100, "NX");
        echo $kv->get("predis:a"), " ", $kv->get("predis:b"), " ", $second === null ? "lost" : "won", " ", $kv->get("predis:nx"), " ";
        var_export($kv->add("predis:nx", "third"));')"
check "phpredis pipelines and MULTI/EXEC" "OK|1|2" \
    "$(phpredis_ '$res = $r->multi()->set("tx", "0")->incr("tx")->incr("tx")->exec(); echo $res[0] ? "OK" : "no", "|", $res[1], "|", $res[2];')"

# redis-py.
py="$root/target/pyenv/bin/python"
if ! "$py" -c 'import redis' 2>/dev/null; then
    { [ -x "$py" ] || python3 -m venv "$root/target/pyenv"; "$root/target/pyenv/bin/pip" install -q redis; } >"$tmp/pip.log" 2>&1
fi
check "redis-py installs from PyPI" "yes" "$("$py" -c 'import redis; print("yes")' 2>&1 | tail -1)"
check "redis-py (it sends CLIENT SETINFO on connect) reads and writes the same store" "written by PHP|61" \
    "$("$py" -c "
import redis
r = redis.Redis(unix_socket_path='$sock', decode_responses=True)
r.incr('php:int')
r.set('from:python', 'py')
print(r.get('from:php') + '|' + r.get('php:int'))" 2>&1)"
check "PHP reads what redis-py wrote" "py" "$(php_ 'echo (new Ephpm\Kv())->get("from:python");')"
check "redis-py speaks RESP3 too" "written by PHP" \
    "$("$py" -c "
import redis
r = redis.Redis(unix_socket_path='$sock', protocol=3, decode_responses=True)
print(r.get('from:php'))" 2>&1)"

# node-redis.
if [ ! -d "$root/target/node/node_modules/redis" ]; then
    npm install --prefix "$root/target/node" --no-audit --no-fund --silent redis@4 >"$tmp/npm.log" 2>&1
fi
check "node-redis installs from npm" "yes" "$([ -d "$root/target/node/node_modules/redis" ] && echo yes)"
check "node-redis reads and writes the same store" "py|written by PHP" \
    "$(NODE_PATH="$root/target/node/node_modules" node -e "
const { createClient } = require('redis');
(async () => {
  const c = createClient({ socket: { path: '$sock' } });
  await c.connect();
  await c.set('from:node', 'nd');
  console.log((await c.get('from:python')) + '|' + (await c.get('from:php')));
  await c.quit();
})().catch(e => { console.log('error: ' + e.message); process.exit(1); });" 2>&1)"
check "PHP reads what node-redis wrote" "nd" "$(php_ 'echo (new Ephpm\Kv())->get("from:node");')"

# Locks across languages: a MemoLock and a Redis client's EPHPM.LOCK exclude each other.
# The PHP process holds its lock until told to go (a Lock is released when it is freed).
php_ '$l = (new Ephpm\MemoLock())->acquire("job", 600000);
    file_put_contents("'"$tmp"'/php-lock.tmp", $l->token . " " . $l->fence); rename("'"$tmp"'/php-lock.tmp", "'"$tmp"'/php-lock");
    for ($i = 0; $i < 400 && !file_exists("'"$tmp"'/go"); $i++) { usleep(50000); }
    echo $l->release() ? "released by PHP" : "not PHP'"'"'s any more";' >"$tmp/php-holder.out" &
holder=$!
for _ in $(seq 200); do [ -f "$tmp/php-lock" ] && break; sleep 0.05; done
read -r php_token php_fence < "$tmp/php-lock"
check "a Redis client cannot take a lock a MemoLock holds" "" "$(cli EPHPM.LOCK job py-token-0000000001 10000)"
check "nor release it with another token" "0" "$(cli EPHPM.UNLOCK job py-token-0000000001)"
check "nor extend it" "0" "$(cli EPHPM.EXTEND job py-token-0000000001 10000)"
check "the MemoLock's own token releases it (a Redis client that was handed the token)" "1" "$(cli EPHPM.UNLOCK job "$php_token")"
touch "$tmp/go"; wait "$holder"
check "the PHP holder then finds its lock gone and releases nothing of anyone else's" "not PHP's any more" "$(cat "$tmp/php-holder.out")"
py_fence=$("$py" -c "
import redis
r = redis.Redis(unix_socket_path='$sock')
print(r.execute_command('EPHPM.LOCK', 'job', 'py-token-0000000002', 10000))" 2>&1)
check "redis-py then takes it, with a greater fencing number" "yes" "$([ "$py_fence" -gt "$php_fence" ] 2>/dev/null && echo yes || echo "no: $py_fence after $php_fence")"
check "a MemoLock cannot take the lock redis-py holds" "NULL" "$(php_ 'var_dump((new Ephpm\MemoLock())->acquire("job"));' | tr -d '\n')"
cli EPHPM.UNLOCK job py-token-0000000002 >/dev/null
check "once redis-py releases, the MemoLock takes it with a greater fence" "yes" \
    "$(php_ '$l = (new Ephpm\MemoLock())->acquire("job"); echo $l && $l->fence > '"${py_fence:-0}"' ? "yes" : "no";')"
check "the server logged nothing but its start" "1" "$(wc -l < "$tmp/resp.log")"

# What operators look at names the server and its clients.
redis-cli -s "$sock" SUBSCRIBE keep-me-connected >/dev/null & held=$!
for _ in $(seq 100); do [ "$(cli CLIENT LIST | grep -c .)" -ge 2 ] && break; sleep 0.05; done
check "php --ri ephpm shows the server and its clients" "Redis protocol (ephpm-resp) => serving, 1 clients" \
    "$(php -n -d "extension=$so" -d "ephpm.store_name=$store" --ri ephpm | grep -o 'Redis protocol (ephpm-resp) => serving, [0-9]* clients')"
check "Kv::stats() says so too (the status page's row)" "serving, 1 clients" \
    "$(php_ 'echo preg_replace("/, [0-9]+ commands$/", "", (new Ephpm\Kv())->stats()["resp_server"]);')"
check "ephpm stats says so too" "resp_server          serving, 1 clients" \
    "$("$root/target/release/ephpm" stats --store "$store" | grep resp_server | sed 's/, [0-9]* commands$//')"
kill "$held" 2>/dev/null; wait "$held" 2>/dev/null

# On cluster:// the server is a door to the fleet's store, through this host's node: a
# write through it is read on another host, and SET NX is decided by the key's owner.
start_cluster "$tmp" "resp_fleet_$$" 2
"$root/target/release/ephpm-resp" --store "resp_fleet_$$-1" --dsn "cluster://resp_fleet_$$-1" \
    --socket "$tmp/fleet.sock" 2>"$tmp/fleet.log" &
fleet=$!
for _ in $(seq 100); do [ -S "$tmp/fleet.sock" ] && break; sleep 0.05; done
check "SET NX through the fleet's door: the first wins" "OK" "$(redis-cli -s "$tmp/fleet.sock" SET fleet:key first NX PX 60000)"
check "and a second loses" "" "$(redis-cli -s "$tmp/fleet.sock" SET fleet:key second NX PX 60000)"
fleet_read=""
for _ in $(seq 100); do
    fleet_read=$(php -n -d "extension=$so" -d ephpm.cluster.enabled=0 -d ephpm.store_name="resp_fleet_$$-2" \
        -r 'echo (new Ephpm\Kv("cluster://resp_fleet_'"$$"'-2"))->get("fleet:key");' 2>&1)
    [ "$fleet_read" = first ] && break; sleep 0.1
done
check "PHP on the other host reads what the Redis client wrote" "first" "$fleet_read"
kill "$fleet" 2>/dev/null; wait "$fleet" 2>/dev/null
stop_cluster "$tmp" "resp_fleet_$$"
summary resp-clients
