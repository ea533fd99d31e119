#!/usr/bin/env bash
# PHP's own session tests (php-src ext/session/tests, from Debian's php8.2 source
# package) against ephpm, twice: with the native save handler
# (session.save_handler=ephpm) and with an Ephpm\SessionHandler object installed before
# every test. Each run has a store of its own. The upload tests (rfc1867*) need the CGI
# binary (Debian's php8.2-cgi, in the Makefile's PACKAGES): without it they would skip,
# and the count would depend on what happens to be installed. Ends with one line
# "session: N passed, N failed, N skipped" (run-tests.php's SKIPIF skips count as
# skipped; the excluded tests below are not run and are listed).
#   php-tests/harness/session-suite.sh path/to/ephpm.so
# The tests are fetched once (apt-get source, as root; deb-src entries are added when
# there are none) and kept in target/php-src-session-tests, so later runs are offline.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
so=$(realpath "$1")
cache="$root/target/php-src-session-tests"

# Tests that are not ephpm's to pass, one reason each. Both runs:
excluded_both="
session_ini_set prints the previous handler's name, files, then selects files itself
session_module_name_variation3 prints the previous handler's name, files, then selects files itself
016 invalid save_path: checks the files handler's error for an unusable directory
bug42596 session.save_path's file mode option: the files handler's session files
bug61470 looks for the session file (sess_<id>) the files handler writes
gh13856 open_basedir against session.save_path: the files handler opens a directory
session_save_path_variation2 session_start() fails on a missing save_path directory (files)
session_save_path_variation3 session_start() fails on a missing save_path directory (files)
session_save_path_variation4 open_basedir against session.save_path (files)
rfc1867_sid_invalid an invalid id in an upload: the files handler's own warnings word for word (ephpm refuses the id too, in its words)
"
# Only with the object installed (object handle numbers are one higher: the handler
# object is #1; a test's own handler replaces it):
excluded_object="
003 prints the handle numbers of the objects it decodes (#N)
023 prints the handle numbers of the objects it decodes (#N)
bug79031 prints the handle numbers of the objects it decodes (#N)
session_decode_basic prints the handle numbers of the objects it decodes (#N)
session_decode_basic_serialize prints the handle numbers of the objects it decodes (#N)
004 its own handler object, then handle numbers (#N)
005 its own handler object, then handle numbers (#N)
session_set_save_handler_basic its 6 callbacks keep the object's updateTimestamp (PHP replaces only the slots given)
session_set_save_handler_sid_001 its 7 callbacks keep the object's updateTimestamp, which refuses the test's id (underscores: no id PHP's files handler takes)
bug79221 upload progress: PHP writes it while it parses the upload, before any script could install a handler object
rfc1867 upload progress, written before the handler object is installed
rfc1867_cleanup upload progress, written before the handler object is installed
rfc1867_disabled_2 upload progress, written before the handler object is installed
rfc1867_inter upload progress, written before the handler object is installed
rfc1867_no_name upload progress, written before the handler object is installed
rfc1867_sid_cookie upload progress, written before the handler object is installed
rfc1867_sid_get upload progress, written before the handler object is installed
rfc1867_sid_get_2 upload progress, written before the handler object is installed
rfc1867_sid_only_cookie upload progress, written before the handler object is installed
rfc1867_sid_only_cookie_2 upload progress, written before the handler object is installed
rfc1867_sid_post upload progress, written before the handler object is installed
"


# Fetches php8.2's source package (the installed version, else the newest the mirror
# serves) and keeps its ext/session/tests (and the cgi include one test's SKIPIF needs).
fetch_tests() {
    local work v installed version=""
    apt-cache showsrc php8.2 2>/dev/null | grep -q '^Version:' || add_deb_src
    apt-get update -qq
    command -v xz >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq xz-utils >/dev/null
    installed=$(dpkg-query -W -f='${Version}' php8.2-cli 2>/dev/null)
    work=$(mktemp -d)
    chmod 755 "$work"   # apt's _apt user downloads into it
    for v in $installed $(apt-cache showsrc php8.2 | sed -n 's/^Version: //p' | sort -rV); do
        if (cd "$work" && apt-get source --download-only -qq "php8.2=$v" >/dev/null 2>&1); then
            version=$v; break
        fi
        rm -f "$work"/*
    done
    if [ -z "$version" ]; then echo "apt-get source php8.2 failed"; rm -rf "$work"; return 1; fi
    tar -xJf "$work"/php8.2_*.orig.tar.xz -C "$work" --wildcards \
        '*/ext/session/tests/*' '*/sapi/cgi/tests/include.inc' || { rm -rf "$work"; return 1; }
    rm -rf "$cache"; mkdir -p "$cache"
    mv "$work"/php-*/ext "$work"/php-*/sapi "$cache"/
    echo "$version" > "$cache/VERSION"
    rm -rf "$work"
}

if [ ! -f "$cache/VERSION" ]; then
    if [ "$(id -u)" != 0 ]; then
        skip "php-src's session tests: fetching them needs root (apt-get)"; summary session; exit 0
    fi
    fetch_tests || { failed=1; echo "FAIL - php-src's session tests could not be fetched"; summary session; exit 1; }
fi
echo "php-src session tests of php8.2 $(cat "$cache/VERSION") on $(php -r 'echo PHP_VERSION;')"

tmp=$(mktemp -d)
store="session_suite_$$"
trap 'rm -rf "$tmp" /dev/shm/ephpm."$(id -u)"."$store"_* /dev/shm/ephpm-"$(id -u)"*/"$store"_*' EXIT
cat > "$tmp/object.php" <<'PHP'
<?php
// The save handler of every test unless the test sets its own (as any would replace it).
if (session_status() === PHP_SESSION_NONE && !headers_sent()) {
    session_set_save_handler(new Ephpm\SessionHandler(), true);
}
PHP

# run MODE NAME EXCLUDED -d...: one pass over a fresh copy of the tests, on which the
# handler PHP names NAME stands in for files; adds to the counts.
run() {
    local mode=$1 shown=$2 excluded=$3 dir="$tmp/$1" log="$tmp/$1.log" name
    shift 3
    mkdir -p "$dir"; cp -r "$cache/ext" "$cache/sapi" "$dir"/
    local tests="$dir/ext/session/tests"
    # The handler a test's --INI-- picks is ephpm, and where it prints the name of the
    # handler it runs on, that name is ours (not where it picks files itself).
    sed -i 's/^session\.save_handler *= *"\?files"\?$/session.save_handler=ephpm/' "$tests"/*.phpt
    grep -L -e 'session_module_name("files")' -e 'save_handler", "files")' "$tests"/*.phpt |
        xargs -r sed -i "s/^string(5) \"files\"\$/string(${#shown}) \"$shown\"/"
    while read -r name reason; do
        [ -n "$name" ] && rm -f "$tests/$name.phpt" && echo "excluded ($mode): $name: $reason"
    done <<< "$excluded_both$excluded"
    # session.save_path= : upstream's default (Debian's is /var/lib/php/sessions, which
    # three tests would print). The copy keeps php-src's layout: a test expects its
    # folder to be named tests, one SKIPIF includes sapi/cgi/tests/include.inc.
    NO_INTERACTION=1 php -n "$(php-config --extension-dir)/build/run-tests.php" -q -n \
        -p "$(command -v php)" -d "extension=$so" -d "ephpm.store_name=${store}_$mode" \
        -d ephpm.shm_size=16M -d session.save_handler=ephpm -d session.save_path= "$@" \
        "$tests" > "$log" 2>&1
    sed -n '/^\(FAILED\|BORKED\) TEST SUMMARY/,/^=====/p' "$log" | grep -v -e '^---' -e '^===' \
        -e 'TEST SUMMARY' | sed "s|$tests/||; s/^/$mode: FAIL /"
    count() { local n; n=$(sed -n "s/^$1 *: *\([0-9]*\).*/\1/p" "$log" | head -1); echo "${n:-0}"; }
    local p f s
    p=$(( $(count "Tests passed") + $(count "Expected fail") ))   # XFAIL: PHP's own known failure
    f=$(( $(count "Tests failed") + $(count "Tests warned") + $(count "Tests borked") ))
    s=$(count "Tests skipped")
    if ! grep -q '^Tests passed' "$log"; then   # run-tests.php itself did not finish
        f=$((f + 1)); tail -20 "$log"
    fi
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
    echo "$mode run: $p passed, $f failed, $s skipped"
}

run native ephpm ""
run object user "$excluded_object" -d "auto_prepend_file=$tmp/object.php"
summary session
