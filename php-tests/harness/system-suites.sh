#!/usr/bin/env bash
# One system of php-tests/systems: made once and the extension built in it for its PHP
# (system-build.sh), then test-all.sh --system NAME in it, whose summary lines are
# NAME-suite: … .
#   php-tests/harness/system-suites.sh NAME
# Prints "NAME-build: 0 passed, 1 failed" when the system or the build cannot be made.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
name=$1
out="$root/target/systems/$name"
fail() { echo "FAIL - $name: $1"; echo "$name-build: 0 passed, 1 failed, 0 skipped"; exit 1; }
bash "$here/system-build.sh" "$name" || { echo "$name-build: 0 passed, 1 failed, 0 skipped"; exit 1; }
echo "$name-build: 1 passed, 0 failed, 0 skipped"
# The system's own WordPress, unpacked beside it, for the phpt that compares the drop-in
# with core's WP_Object_Cache and for make test-wordpress-core.
if [ ! -f "$out/wordpress/usr/share/wordpress/wp-settings.php" ]; then
    bash "$here/system.sh" run "$name" bash "$here/unpack-wordpress.sh" "$out/wordpress" \
        || fail "its wordpress package could not be unpacked"
fi
bash "$here/system.sh" run "$name" env EPHPM_WORDPRESS="$out/wordpress/usr/share/wordpress" \
    bash "$here/test-all.sh" --system "$name" ${EPHPM_MATRIX:+--matrix} "$out/ephpm.so"
