#!/usr/bin/env bash
# Laravel's release branches that Debian does not package (11 and 12), each a checkout in
# target/laravel-N (php-tests/laravel-branches/README.md lays them out), run by the suites
# that run on Debian's Laravel: the Laravel phpts, the adapters' load test and the real
# application (laravel-suite.sh, on the host store and on Redis). They run in the newest
# system (php-tests/systems/newest.conf: sid's Laravel 13 brings every library 11 and 12
# need; its own Illuminate is never loaded) with the extension built there.
#   php-tests/harness/laravel-branches.sh [N...]      (default: 11 12)
# Prints the suites' lines as laravel-N-SUITE: … and, last, their sum.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
so="$root/target/systems/newest/ephpm.so"
bash "$here/system-build.sh" newest || exit 1
passed=0 failed=0 skipped=0
branches=("$@"); [ ${#branches[@]} -gt 0 ] || branches=(11 12)
for n in "${branches[@]}"; do
    src="$root/target/laravel-$n"
    if [ ! -f "$src/composer.json" ]; then
        echo "FAIL - laravel-$n: $src is missing (php-tests/laravel-branches/README.md)"; failed=$((failed + 1)); continue
    fi
    for suite in "run-phpt.sh $so $(cd "$root" && ls php-tests/laravel_*.phpt php-tests/adapters_*.phpt | sed "s|^|$root/|" | tr '\n' ' ')" \
                 "laravel-suite.sh $so" "laravel-suite.sh $so redis"; do
        # shellcheck disable=SC2086 # a suite and its arguments are words
        out=$(bash "$here/system.sh" run newest env EPHPM_LARAVEL_SRC="$src" bash "$here/"$suite 2>&1)
        echo "$out" | grep -E '^(FAIL|not ok)' | sed "s/^/laravel-$n: /"
        line=$(echo "$out" | grep -E '^[a-z-]+: [0-9]+ passed, [0-9]+ failed' | tail -n 1)
        echo "laravel-$n-$line"
        read -r p f s < <(echo "$line" | sed 's/.*: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped.*/\1 \2 \3/')
        passed=$((passed + ${p:-0})) failed=$((failed + ${f:-1})) skipped=$((skipped + ${s:-0}))
    done
done
echo "laravel-branches: $passed passed, $failed failed, $skipped skipped"
