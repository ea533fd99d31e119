# Helpers shared by the shell suites: counting checks and the summary line.
passed=0; failed=0; skipped=0
check() { # check "what it shows" expected actual
    if [ "$2" = "$3" ]; then passed=$((passed + 1)); echo "ok - $1"
    else failed=$((failed + 1)); echo "FAIL - $1: expected [$2], got [$3]"; fi
}
# fpm_pool NAME DIR CHILDREN [LINE...]: a static php-fpm pool of this user listening on
# DIR/NAME.sock, with CHILDREN workers and each LINE (php_value, ...) appended.
fpm_pool() {
    local name=$1 dir=$2 children=$3; shift 3
    printf '[%s]\nuser = %s\ngroup = %s\nlisten = %s/%s.sock\npm = static\npm.max_children = %s\n' \
        "$name" "$(id -un)" "$(id -gn)" "$dir" "$name" "$children"
    printf '%s\n' "$@"
}
skip() { skipped=$((skipped + 1)); echo "skip - $1"; }
summary() { echo "$1: $passed passed, $failed failed, $skipped skipped"; }
# fpm_binary: Debian's php-fpm of the PHP that `php` is (php-fpm8.2 here, php-fpm8.5 in
# the newest system of php-tests/systems), else any php-fpm.
fpm_binary() {
    command -v "php-fpm$(php -r 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;')" || command -v php-fpm
}
# opcache_ini: the words that load OPcache into a `php -n` (PHP 8.5 has it built in, and
# a zend_extension=opcache there is a warning), as an array.
opcache_ini() {
    php -n -r 'exit(extension_loaded("Zend OPcache") ? 0 : 1);' || opcache=(-d zend_extension=opcache)
}
opcache=(); opcache_ini
# find_fpm LABEL: sets $fpm to Debian's php-fpm, or skips the suite LABEL (its summary
# line said) and exits when php-fpm or cgi-fcgi is missing.
find_fpm() {
    fpm=$(fpm_binary)
    if [ -z "$fpm" ] || ! command -v cgi-fcgi >/dev/null; then
        skip "php-fpm and cgi-fcgi are not installed"; summary "$1"; exit 0
    fi
}
# start_redis DIR: a redis-server (EPHPM_REDIS_SERVER: another, valkey-server) on the
# unix socket DIR/redis.sock (mode 0700, no TCP port, no persistence), its pid in
# DIR/redis.pid; returns once the socket is there.
start_redis() {
    "${EPHPM_REDIS_SERVER:-redis-server}" --port 0 --unixsocket "$1/redis.sock" --unixsocketperm 700 --save "" \
        --appendonly no --dir "$1" --daemonize yes --pidfile "$1/redis.pid" >/dev/null
    for _ in $(seq 100); do [ -S "$1/redis.sock" ] && break; sleep 0.05; done
}
# make_certs DIR: a CA made for the test (DIR/ca.crt) and two certificates it signs:
# DIR/server.crt (for 127.0.0.1; the servers also use it as their client certificate on
# the cluster bus and to their master) and DIR/client.crt, with their .key files.
make_certs() {
    local dir=$1 name
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/ca.key" -out "$dir/ca.crt" -days 2 \
        -subj "/CN=ephpm test CA" 2>/dev/null
    echo "subjectAltName=IP:127.0.0.1" > "$dir/san.ext"
    for name in server client; do
        openssl req -newkey rsa:2048 -nodes -keyout "$dir/$name.key" -out "$dir/$name.csr" \
            -subj "/CN=ephpm test $name" 2>/dev/null
        openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
            -out "$dir/$name.crt" -days 2 -extfile "$dir/san.ext" 2>/dev/null
    done
}
# start_redis_cluster DIR [tls]: a Redis Cluster of three masters with a replica each on
# loopback ports (no persistence, 1 s node timeout), pids in DIR/rc-I.pid; with tls, it
# speaks TLS only (clients, cluster bus, replication) with certificates from make_certs
# and asks clients for theirs. Sets $redis_cluster_seeds to "127.0.0.1:P1,…" and
# $redis_cluster_query to the DSN's TLS parameters followed by "&" (empty without tls),
# and returns once `redis-cli --cluster check` finds every slot covered and every node
# agreeing, and every node says the cluster is ok.
start_redis_cluster() {
    local dir=$1 tls=${2:-} i port ports=() listen cli=()
    redis_cluster_query=""
    if [ "$tls" = tls ]; then
        make_certs "$dir"
        cli=(--tls --cacert "$dir/ca.crt" --cert "$dir/client.crt" --key "$dir/client.key")
        redis_cluster_query="ca=$dir/ca.crt&cert=$dir/client.crt&key=$dir/client.key&"
    fi
    # A node whose random port (or its bus port, +10000) was taken never answers: it is
    # started again on another.
    for i in 1 2 3 4 5 6; do
        mkdir -p "$dir/rc-$i"
        for _ in 1 2 3 4 5; do
            port=$((20000 + RANDOM % 20000))
            listen=(--port "$port")
            [ "$tls" = tls ] && listen=(--port 0 --tls-port "$port" --tls-cert-file "$dir/server.crt"
                --tls-key-file "$dir/server.key" --tls-ca-cert-file "$dir/ca.crt" --tls-auth-clients yes
                --tls-replication yes --tls-cluster yes)
            rm -f "$dir/rc-$i.pid"
            redis-server --bind 127.0.0.1 "${listen[@]}" --cluster-enabled yes \
                --cluster-node-timeout 1000 --cluster-require-full-coverage no --save "" --appendonly no --dir "$dir/rc-$i" \
                --daemonize yes --pidfile "$dir/rc-$i.pid" >/dev/null
            for _ in $(seq 100); do redis-cli "${cli[@]}" -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1 && break 2; sleep 0.05; done
            [ -f "$dir/rc-$i.pid" ] && kill -9 "$(cat "$dir/rc-$i.pid")" 2>/dev/null
        done
        ports+=("127.0.0.1:$port")
    done
    redis-cli "${cli[@]}" --cluster create "${ports[@]}" --cluster-replicas 1 --cluster-yes >/dev/null
    for _ in $(seq 200); do
        redis-cli "${cli[@]}" --cluster check "${ports[0]}" 2>/dev/null | grep -q 'All 16384 slots covered' && break
        sleep 0.05
    done
    for i in "${ports[@]}"; do
        for _ in $(seq 200); do
            redis-cli "${cli[@]}" -h 127.0.0.1 -p "${i#*:}" cluster info 2>/dev/null | grep -q 'cluster_state:ok' && break
            sleep 0.05
        done
    done
    redis_cluster_seeds=$(IFS=,; echo "${ports[*]}")
}
# stop_redis_cluster DIR: kills its nodes by pid.
stop_redis_cluster() {
    local f
    for f in "$1"/rc-*.pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
}
# start_cluster DIR NAME N: N ephpm-node processes on 127.0.0.1…N (the first the
# others' seed), host stores NAME-1…NAME-N of 16M in /dev/shm, 100 ms gossip, the test
# secret; their pids in DIR/node-I.pid, their logs in DIR/node-I.log. Returns once every
# node's socket is there and the first node has seen them all (a probe over its socket).
start_cluster() {
    local dir=$1 name=$2 n=$3 root seed="" i port
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    for i in $(seq "$n"); do
        port=$((20000 + RANDOM % 20000))
        EPHPM_CLUSTER_SECRET=cGhwdC1jbHVzdGVyLXNlY3JldC0xMjgtYml0cw setsid "$root/target/release/ephpm-node" \
            --store "$name-$i" --node-id "node-$i" --gossip "127.0.0.$i:$port" \
            --gossip-interval-ms 100 --shm-size 16M $seed >"$dir/node-$i.log" 2>&1 &
        echo $! >"$dir/node-$i.pid"
        disown $!   # stopped by pid, with no "Killed" message from the shell
        [ -z "$seed" ] && seed="--seed 127.0.0.1:$port"
    done
    for i in $(seq "$n"); do
        for _ in $(seq 200); do [ -S "/dev/shm/ephpm-$(id -u)/$name-$i.cluster.sock" ] && break; sleep 0.05; done
    done
    for _ in $(seq 200); do
        grep -q "members now $(seq -f 'node-%g' -s ', ' "$n")\$" "$dir/node-1.log" && break
        sleep 0.05
    done
    sleep 0.5
}
# stop_cluster DIR NAME: kills the nodes by pid and removes their segments.
stop_cluster() {
    local f
    for f in "$1"/node-*.pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
    rm -f /dev/shm/ephpm-"$(id -u)"/"$2"-*
}
# run_generic_phpts SO LABEL DSN...: the backend-generic .phpt tests, each with
# ephpm.dsn set to the next DSN in turn followed by "prefix=TEST:" (the DSN ends in ? or
# &), then one line "LABEL: N passed, N failed, N skipped"; with PHPTS_MATCHING set (an
# extended regular expression), only the tests whose names match it. What only shm:// has
# (segments, their size and fullness, its phpinfo lines, the scribbled segment, whose
# processes run with -n and their own ini, so the rerun's DSN never reaches them),
# argument checking (no backend sees it), and the tests that start Redis servers of
# their own stay out.
run_generic_phpts() {
    local so=$1 label=$2 here tests t name line tp tf ts p=0 f=0 s=0 i=0
    shift 2
    local dsns=("$@")
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    tests=$(cd "$here/.." && pwd)
    local shm_only=" kv_segment_is_replaced_when_its_size_changes kv_store_full_keeps_the_old_value
          kv_scribbled_segment_never_hangs_or_crashes_php
          phpinfo_shows_the_live_store_and_settings kv_bad_input_is_rejected_with_php_errors
          stub_matches_the_extension "
    for t in "$tests"/*.phpt; do
        name=$(basename "$t" .phpt)
        case "$shm_only" in *" $name "*|*" $name"$'\n'*) continue ;; esac
        case "$name" in redis_*|cluster_*) continue ;; esac
        [[ $name =~ ${PHPTS_MATCHING:-} ]] || continue
        line=$(PHPT_INI="-d ephpm.shm_size=16M -d ephpm.dsn=\"${dsns[i % ${#dsns[@]}]}prefix=$name:\"" \
            bash "$here/run-phpt.sh" "$so" "$t" | tee >(cat >&2) | tail -1)
        i=$((i + 1))
        read -r tp tf ts < <(echo "$line" | sed 's/^phpt: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped/\1 \2 \3/')
        p=$((p + tp)); f=$((f + tf)); s=$((s + ts))
        # Named on stdout, where make test collects the names of failed tests.
        [ "${tf:-0}" -gt 0 ] && echo "FAIL - $name ($label)"
    done
    echo "$label: $p passed, $f failed, $s skipped"
}
# start_mariadb DIR: a MariaDB server of its own (data in DIR/mysql, no TCP port, the
# socket DIR/mysql.sock, pid in DIR/mysql.pid) with an empty database "wordpress" that
# the current user reaches as root over the socket; returns once it answers.
start_mariadb() {
    local dir=$1
    mariadb-install-db --no-defaults --datadir="$dir/mysql" --user="$(id -un)" \
        --auth-root-authentication-method=normal --skip-test-db >"$dir/mysql-install.log" 2>&1 || return 1
    setsid mariadbd --no-defaults --datadir="$dir/mysql" --socket="$dir/mysql.sock" \
        --pid-file="$dir/mysql.pid" --skip-networking --user="$(id -un)" \
        --innodb-buffer-pool-size=64M --innodb-log-file-size=16M --log-error="$dir/mysql.log" &
    disown $!
    for _ in $(seq 300); do
        mariadb --no-defaults -S "$dir/mysql.sock" -uroot -e 'CREATE DATABASE IF NOT EXISTS wordpress' 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
# stop_mariadb DIR: stops it by pid and waits until it is gone.
stop_mariadb() {
    local pid
    [ -f "$1/mysql.pid" ] || return 0
    pid=$(cat "$1/mysql.pid"); kill "$pid" 2>/dev/null
    for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
}
# add_deb_src: the deb-src entries `apt-get source` needs (session-suite.sh,
# symfony-cache-suite.sh), derived from the system's Debian entries.
add_deb_src() {
    local f out=/etc/apt/sources.list.d/ephpm-deb-src
    for f in /etc/apt/sources.list.d/*.sources; do
        [ "$f" != "$out.sources" ] && grep -qs '^URIs:.*debian' "$f" &&
            { sed 's/^Types: deb$/Types: deb-src/' "$f"; echo; }
    done > "$out.tmp"
    mv "$out.tmp" "$out.sources"
    [ -f /etc/apt/sources.list ] &&
        sed -n 's/^deb \(.*debian.*\)/deb-src \1/p' /etc/apt/sources.list > "$out.list"
}
