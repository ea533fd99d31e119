#!/usr/bin/env bash
# What `ephpm.deploys` costs a request: php-cgi -T N runs an empty script N times, each
# a whole request (startup, RINIT, RSHUTDOWN), with the watch off and on, alternated
# ROUNDS times; prints µs per request for each and the difference.
#   bash bench/deploy_check.sh [ROUNDS=5] [N=20000]
set -eu
rounds=${1:-5} n=${2:-20000}
so=$(realpath "$(dirname "$0")/../target/ephpm.so")
script=$(mktemp --suffix=.php); echo '<?php' > "$script"
store="deploycheck_$$"; trap 'rm -f "$script" "/dev/shm/ephpm-$(id -u)/$store"' EXIT
php -n -d "extension=$so" -d "ephpm.store_name=$store" -r '(new Ephpm\Kv())->set("ephpm:release", 7);'
for r in $(seq "$rounds"); do
    for on in 0 1; do
        t0=$(date +%s%N)
        php-cgi -n -d "extension=$so" -d "ephpm.store_name=$store" -d "ephpm.deploys=$on" -T "$n" "$script" >/dev/null 2>&1
        echo "$on $(( ($(date +%s%N) - t0) / n ))"
    done
done | awk '{ s[$1] = s[$1] " " $2 } END {
    split(substr(s[0], 2), off, " "); split(substr(s[1], 2), on, " ")
    n = asort(off); asort(on); m = int((n + 1) / 2)
    printf "ns per request, median of %d rounds: watch off %d, on %d, difference %d\n", n, off[m], on[m], on[m] - off[m] }'
