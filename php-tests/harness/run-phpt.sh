#!/usr/bin/env bash
# Runs the .phpt suite through PHP's own run-tests.php against the built extension,
# each test in a fresh `php -n` (no php.ini: only what the test's --INI-- sets), and
# prints one line: "N passed, N failed, N skipped".
#   php-tests/run-phpt.sh path/to/ephpm.so [test files or folders...]
# PHPT_INI (optional): more "-d name=value" words for every test (the Redis rerun's DSN).
# PHPT_PHP (optional): the php binary under test (default: php on the PATH; make test-zts's).
set -u
so=$(realpath "$1"); shift
here=$(cd "$(dirname "$0")/.." && pwd)
# The whole suite removes the segments an interrupted run left behind, before and after;
# a run of named tests leaves them (another run may be using them).
whole=0; [ $# -gt 0 ] || { whole=1; set -- "$here"; }
run_tests="$(php-config --extension-dir)/build/run-tests.php"
# WordPress's own files, unpacked from Debian's package by `make deps` (not installed: its
# dependencies would bring a web server): the object cache's test compares with core's.
# A system of php-tests/systems names its own release's (system-suites.sh).
export EPHPM_SO="$so" NO_INTERACTION=1 EPHPM_WORDPRESS="${EPHPM_WORDPRESS:-$here/../target/wordpress/usr/share/wordpress}"
log=$(mktemp)
[ $whole = 1 ] && rm -f /dev/shm/ephpm-"$(id -u)"/phpt_*
# shellcheck disable=SC2086 # PHPT_INI is a list of words
# One line per test, named: run-tests.php writes each result after a "TEST n/N" progress
# line ended by a carriage return, so the result only starts a line once that is a newline.
php -n "$run_tests" -q -n --no-color -p "${PHPT_PHP:-$(command -v php)}" -d "extension=$so" ${PHPT_INI:-} "$@" 2>&1 | tee "$log" \
    | tr '\r' '\n' | grep -E '^(PASS|FAIL|SKIP|BORK) ' || true
# What each failed test printed against what it expected (run-tests.php's .diff beside
# it), so that a failure in a long run says why without a rerun.
tr '\r' '\n' < "$log" | sed -n 's/^FAIL .*\[\(.*\)\.phpt\] *$/\1.diff/p' | while read -r diff; do
    [ -f "$diff" ] && { echo "    --- $diff"; head -n 30 "$diff" | sed 's/^/    /'; echo; }
done
count() { sed -n "s/^Tests $1 *: *\([0-9]*\).*/\1/p" "$log" | head -1; }
passed=$(count passed); failed=$(count failed); skipped=$(count skipped)
warned=$(count warned); borked=$(tr '\r' '\n' < "$log" | grep -c '^BORK ' || true)
# A failure run-tests.php counted without a FAIL line of its own (a WARN, a LEAK, a crash
# of the runner): its last words instead.
if [ $(( ${failed:-0} + ${warned:-0} + ${borked:-0} )) -gt 0 ] && ! tr '\r' '\n' < "$log" | grep -q '^FAIL '; then
    tr '\r' '\n' < "$log" | grep -v '^$' | tail -n 30 | sed 's/^/    /'
fi
rm -f "$log"; [ $whole = 1 ] && rm -f /dev/shm/ephpm-"$(id -u)"/phpt_*
echo "phpt: ${passed:-0} passed, $(( ${failed:-0} + ${warned:-0} + ${borked:-0} )) failed, ${skipped:-0} skipped"
