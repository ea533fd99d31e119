#!/usr/bin/env bash
# Runs the backend-generic .phpt tests again with ephpm.dsn on a real redis-server (its
# unix socket, in a private directory; stopped by pid), each test with its own key prefix,
# and prints one line: "phpt-redis: N passed, N failed, N skipped".
#   php-tests/harness/phpt-on-redis.sh path/to/ephpm.so
set -u
so=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
tests=$(cd "$here/.." && pwd)
. "$here/lib.sh"
dir=$(mktemp -d)
trap 'kill "$(cat "$dir/redis.pid" 2>/dev/null)" 2>/dev/null; sleep 0.2; rm -rf "$dir"' EXIT
start_redis "$dir"
# What only shm:// has (segments, their size and fullness, its phpinfo lines) stays out,
# and so does argument checking, which no backend sees.
shm_only="kv_segment_is_replaced_when_its_size_changes kv_store_full_keeps_the_old_value
          phpinfo_shows_the_live_store_and_settings kv_bad_input_is_rejected_with_php_errors
          stub_matches_the_extension"
p=0; f=0; s=0
for t in "$tests"/*.phpt; do
    name=$(basename "$t" .phpt)
    case " $(echo $shm_only) " in *" $name "*) continue ;; esac
    case "$name" in redis_*) continue ;; esac   # these start Redis servers of their own
    line=$(PHPT_INI="-d ephpm.dsn=\"unix://$dir/redis.sock?prefix=$name:\"" \
        bash "$here/run-phpt.sh" "$so" "$t" | tee /dev/stderr | tail -1)
    read -r tp tf ts < <(echo "$line" | sed 's/^phpt: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped/\1 \2 \3/')
    p=$((p + tp)); f=$((f + tf)); s=$((s + ts))
done
echo "phpt-redis: $p passed, $f failed, $s skipped"
