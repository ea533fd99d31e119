#!/usr/bin/env bash
# A real WordPress (Debian's 6.1, theme twentytwentyone, 200 posts) behind nginx and
# php-fpm (pm static, 12 workers) on a private MariaDB, loaded by ApacheBench (ab, 12
# concurrent clients): the front page and a category archive, requests/s, p50/p99 and
# database queries per page, with
#   none         WordPress's own request-local cache
#   redis-cache  the Redis Object Cache plugin's drop-in (rhubarbgroup/redis-cache), phpredis
#   ephpm-shm    the ephpm drop-in on shm://
#   ephpm-redis  the ephpm drop-in on redis:// (the same redis-server, 127.0.0.1)
# then the object-cache calls (bench/wordpress_calls.php) of each drop-in, in one CLI
# process each. Configurations run interleaved, ROUNDS times; the tables give medians.
#
#   REDIS_CACHE=path/to/redis-cache ROUNDS=3 SECONDS_PER_RUN=10 CALLS=20000 bash bench/wordpress.sh [target/ephpm.so]
#
# The Redis Object Cache plugin is not in Debian and cannot be downloaded here: REDIS_CACHE
# names a checkout of it (a release tag: `git archive 2.6.3 | tar -x -C target/redis-cache`);
# without it that configuration is skipped with a message. Every server listens on
# 127.0.0.1 or a unix socket in a temporary folder and is stopped by its pid.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/php-tests/harness/lib.sh"
. "$root/php-tests/harness/wordpress-site.sh"
so=$(realpath "${1:-$root/target/ephpm.so}")
rounds=${ROUNDS:-3}
seconds=${SECONDS_PER_RUN:-10}
calls=${CALLS:-20000}
workers=12
redis_cache=${REDIS_CACHE:-}
fpm=$(command -v php-fpm8.2 || command -v php-fpm)
for tool in "$fpm" nginx mariadbd redis-server ab curl; do
    command -v "$tool" >/dev/null || { echo "wordpress bench: $tool is missing, skipped"; exit 0; }
done
wp_have_files || { echo "wordpress bench: WordPress or its theme is not unpacked in target/ (make deps), skipped"; exit 0; }
configs=(none)
if [ -n "$redis_cache" ] && [ -f "$redis_cache/includes/object-cache.php" ]; then
    redis_cache=$(realpath "$redis_cache")
    configs+=(redis-cache)
else
    echo "wordpress bench: REDIS_CACHE does not name a checkout of rhubarbgroup/redis-cache: the redis-cache configuration is skipped"
fi
configs+=(ephpm-shm ephpm-redis)

tmp=$(mktemp -d)
store="bench_wp_$$"
port=$((20000 + RANDOM % 20000))
redis_port=$((20000 + RANDOM % 20000))
[ "$redis_port" = "$port" ] && redis_port=$((port + 1))
url="http://127.0.0.1:$port"
# Every configuration loads the same extensions; only the drop-in and its constants differ.
ext=(-d "extension=$so" -d "ephpm.store_name=$store" -d ephpm.shm_size=256M -d extension=igbinary -d extension=redis)
cleanup() {
    wp_stop_nginx "$tmp"; wp_stop_fpm "$tmp"; stop_mariadb "$tmp"
    [ -s "$tmp/redis.pid" ] && kill "$(cat "$tmp/redis.pid")" 2>/dev/null
    rm -rf "$tmp" "/dev/shm/ephpm-$(id -u)/$store"
}
trap cleanup EXIT

start_mariadb "$tmp" 2>/dev/null || { echo "wordpress bench: MariaDB did not start"; exit 1; }
redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no --dir "$tmp" \
    --daemonize yes --pidfile "$tmp/redis.pid" >/dev/null
for _ in $(seq 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.05; done
wp_site "$tmp" "$url"
# The drop-ins as they are now, copied: the working tree may change during the run.
mkdir -p "$tmp/ephpm-wp"
cp "$root"/php/WordPress/*.php "$tmp/ephpm-wp/"
echo "wordpress bench: ephpm drop-in of $(git -C "$root" rev-parse --short HEAD 2>/dev/null)$(git -C "$root" status --porcelain -- php/WordPress 2>/dev/null | grep -q . && echo ' (with uncommitted changes)')"
wp_cli "$tmp" -- install "ephpm WordPress bench" >/dev/null
wp_cli "$tmp" -- populate >/dev/null
wp_start_nginx "$tmp" "$port"

# use CONFIG: its drop-in in wp-content and its constants in cache-config.php.
use() {
    rm -f "$tmp/site/wp-content/object-cache.php" "$tmp/site/cache-config.php"
    case "$1" in
        redis-cache)
            ln -s "$redis_cache/includes/object-cache.php" "$tmp/site/wp-content/object-cache.php"
            printf "<?php\ndefine('WP_REDIS_HOST', '127.0.0.1');\ndefine('WP_REDIS_PORT', %d);\n" "$redis_port" > "$tmp/site/cache-config.php" ;;
        ephpm-shm)
            ln -s "$tmp/ephpm-wp/object-cache.php" "$tmp/site/wp-content/object-cache.php" ;;
        ephpm-redis)
            ln -s "$tmp/ephpm-wp/object-cache.php" "$tmp/site/wp-content/object-cache.php"
            printf "<?php\ndefine('EPHPM_WP_DSN', 'redis://127.0.0.1:%d');\n" "$redis_port" > "$tmp/site/cache-config.php" ;;
    esac
}
queries() { curl -s -D - -o /dev/null "$url$1" | tr -d '\r' | awk 'tolower($1) == "x-queries:" { print $2 }'; }
cache_class() { curl -s -D - -o /dev/null "$url/" | tr -d '\r' | awk 'tolower($1) == "x-object-cache:" { print $2, $3 }'; }
# cpu_ticks: the CPU time (utime + stime, clock ticks) so far of the php-fpm workers,
# MariaDB and redis-server: what a page costs the machine, less moved by other jobs on
# it than requests/s.
cpu_ticks() {
    local pids
    pids="$(pgrep -P "$(cat "$tmp/fpm.pid")") $(cat "$tmp/mysql.pid") $(cat "$tmp/redis.pid")"
    # shellcheck disable=SC2086
    for p in $pids; do sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null; done | awk '{ t += $12 + $13 } END { print t }'
}
hz=$(getconf CLK_TCK)

pages=(/ /category/engineering/)
results=$tmp/results   # config page round rps p50 p99 queries failed cpu-ms-per-page
calls_out=$tmp/calls   # config round op ns
echo "wordpress bench: $rounds rounds × ${configs[*]}, ${seconds}s of ab -c $workers per page, php-fpm pm static $workers"
for round in $(seq "$rounds"); do
    for config in "${configs[@]}"; do
        use "$config"
        wp_stop_fpm "$tmp"
        wp_start_fpm "$tmp" "$workers" "${ext[@]}" || { echo "php-fpm did not start"; exit 1; }
        class=$(cache_class)
        for page in "${pages[@]}"; do
            ab -q -c 4 -n 100 "$url$page" >/dev/null 2>&1   # warm-up: every worker, the cache
            q=$(queries "$page")
            c0=$(cpu_ticks)
            out=$(ab -q -s 30 -c "$workers" -t "$seconds" -n 1000000 "$url$page" 2>&1)
            c1=$(cpu_ticks)
            rps=$(echo "$out" | awk '/^Requests per second/ { print $4 }')
            p50=$(echo "$out" | awk '$1 == "50%" { print $2 }')
            p99=$(echo "$out" | awk '$1 == "99%" { print $2 }')
            failed=$(echo "$out" | awk '/^Failed requests/ { f = $3 } /^Non-2xx/ { n = $3 } END { print f + n }')
            n=$(echo "$out" | awk '/^Complete requests/ { print $3 }')
            cpu=$(awk -v a="$c0" -v b="$c1" -v n="$n" -v hz="$hz" 'BEGIN { printf "%.1f", n ? (b - a) * 1000 / hz / n : 0 }')
            echo "$config $page $round $rps $p50 $p99 $q $failed $cpu" >> "$results"
            printf '  round %d %-12s %-24s %8s req/s  p50 %4s ms  p99 %4s ms  %3s queries  %5s CPU ms/page  %s failed  (%s)\n' \
                "$round" "$config" "$page" "$rps" "$p50" "$p99" "$q" "$cpu" "$failed" "$class"
        done
        if [ "$config" != none ]; then
            php "${wp_ini[@]}" "${ext[@]}" "$root/bench/wordpress_calls.php" "$tmp/site" "$calls" \
                | sed "s/^/$config $round /" >> "$calls_out"
        fi
    done
done
wp_stop_fpm "$tmp"

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
col() { awk -v c="$1" -v p="$2" -v k="$3" '$1 == c && $2 == p { print $k }' "$results" | median; }
echo
echo "| cache | front page req/s | p50 ms | p99 ms | queries | CPU ms | archive req/s | p50 ms | p99 ms | queries | CPU ms | failed |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for config in "${configs[@]}"; do
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$config" \
        "$(col "$config" / 4)" "$(col "$config" / 5)" "$(col "$config" / 6)" "$(col "$config" / 7)" "$(col "$config" / 9)" \
        "$(col "$config" /category/engineering/ 4)" "$(col "$config" /category/engineering/ 5)" \
        "$(col "$config" /category/engineering/ 6)" "$(col "$config" /category/engineering/ 7)" "$(col "$config" /category/engineering/ 9)" \
        "$(awk -v c="$config" '$1 == c { f += $8 } END { print f + 0 }' "$results")"
done
if [[ " ${configs[*]} " == *" redis-cache "* ]]; then
    for page in "${pages[@]}"; do
        printf 'ephpm-shm / redis-cache, %s: req/s %s (per round: %s), CPU per page %s\n' "$page" \
            "$(awk -v a="$(col ephpm-shm "$page" 4)" -v b="$(col redis-cache "$page" 4)" 'BEGIN { printf "%.2f", a / b }')" \
            "$(for r in $(seq "$rounds"); do awk -v p="$page" -v r="$r" '$2 == p && $3 == r { v[$1] = $4 } END { printf "%.2f ", v["ephpm-shm"] / v["redis-cache"] }' "$results"; done)" \
            "$(awk -v a="$(col ephpm-shm "$page" 9)" -v b="$(col redis-cache "$page" 9)" 'BEGIN { printf "%.2f", a / b }')"
    done
fi
echo
ccol() { awk -v c="$1" -v o="$2" '{ n = $1; r = $2; $1 = $2 = ""; ns = $NF; $NF = ""; gsub(/^ +| +$/, ""); if (n == c && $0 == o) print ns }' "$calls_out" | median; }
ops=("get hit" "get local" "get_multiple 50" "set" "add" "incr")
header="| call, ns (median of $rounds processes) |"; sep="|---|"
for config in "${configs[@]}"; do [ "$config" = none ] || { header+=" $config |"; sep+="---|"; }; done
[[ " ${configs[*]} " == *" redis-cache "* ]] && { header+=" redis-cache / ephpm-shm |"; sep+="---|"; }
echo "$header"; echo "$sep"
for op in "${ops[@]}"; do
    line="| $op |"
    for config in "${configs[@]}"; do [ "$config" = none ] || line+=" $(ccol "$config" "$op") |"; done
    if [[ " ${configs[*]} " == *" redis-cache "* ]]; then
        line+=" $(awk -v a="$(ccol redis-cache "$op")" -v b="$(ccol ephpm-shm "$op")" 'BEGIN { printf "%.1f×", a / b }') |"
    fi
    echo "$line"
done
