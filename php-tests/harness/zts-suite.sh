#!/usr/bin/env bash
# make test-zts: ephpm on a thread-safe PHP 8.2.
#   php-tests/harness/zts-suite.sh [test files or folders...]
# 1. zts-php.sh: a ZTS PHP from Debian's php8.2 source package, kept in target/zts.
# 2. ephpm built against it (ext-php-rs takes the PHP from PHP and PHP_CONFIG) in its own
#    target folder, target/zts/cargo, so that the NTS build in target/release is untouched.
# 3. run-phpt.sh with that php (PHPT_PHP): its "phpt: N passed, ..." line.
# 4. php-tests/zts/threads.c, a host that embeds that PHP and runs 8 requests at once on
#    8 threads of one process (as FrankenPHP does): increments, exclusive sections and
#    one locked session shared by all of them; its "zts-threads: N passed, ..." line.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"

started=$SECONDS
prefix=$(bash "$here/zts-php.sh") || { echo "zts: 0 passed, 1 failed, 0 skipped"; exit 1; }
echo "== ZTS PHP: $prefix ($((SECONDS - started)) s)"
php=$prefix/bin/php

started=$SECONDS
so=$root/target/zts/ephpm.so
if ! (cd "$root" && PHP="$php" PHP_CONFIG="$prefix/bin/php-config" \
        cargo build --release --lib --target-dir "$root/target/zts/cargo"); then
    echo "zts: 0 passed, 1 failed, 0 skipped"; exit 1
fi
install -m 0755 "$root/target/zts/cargo/release/libephpm.so" "$so"
echo "== ephpm for ZTS: $so ($((SECONDS - started)) s)"
# A PHP refuses a module built for the other thread safety, so this line also shows the
# build is the thread-safe one.
"$php" -n -d extension="$so" -r 'echo "loaded into PHP ", PHP_VERSION, PHP_ZTS ? " ZTS" : " NTS", ", ephpm ", phpversion("ephpm"), "\n";'

PHPT_PHP="$php" bash "$here/run-phpt.sh" "$so" "$@"

# Several PHP threads in one process.
tmp=$(mktemp -d)
store=zts_threads_$$
trap 'rm -rf "$tmp" /dev/shm/ephpm-"$(id -u)"/"$store"*' EXIT
cc -O1 -D_GNU_SOURCE -o "$tmp/threads" "$root/php-tests/zts/threads.c" $("$prefix/bin/php-config" --includes) \
    -I"$(dirname "$(find "$prefix/include" -name php_embed.h)")" "$prefix/lib/libphp.a" \
    $("$prefix/bin/php-config" --libs) -lresolv -lcrypt -rdynamic -pthread
printf 'extension=%s\nephpm.store_name=%s\nephpm.shm_size=8M\n' "$so" "$store" >"$tmp/php.ini"
out=$(PHPRC=$tmp timeout 300 "$tmp/threads" "$root/php-tests/zts/threads.php" 8 2>&1)
echo "$out"
line() { sed -n "s/^$1: //p" <<<"$out"; }
check "8 threads of one process ran on a ZTS PHP" "8, PHP $("$php" -n -r 'echo PHP_VERSION;') ZTS" "$(line threads)"
check "every increment of 8 threads counted" "160000 of 160000" "$(line increments)"
check "MemoLock::exclusively: every section ran, never two at once" "800 of 800, overlapping: 0" "$(line "exclusive sections")"
check "one locked session written by 8 threads: no write lost" "400 of 400" "$(line "session writes")"
check "the threads did run at the same time: get-then-set lost updates" yes "$(line "get-then-set lost updates")"
summary zts-threads
