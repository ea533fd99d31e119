#!/usr/bin/env bash
# Another Unix user can neither open this user's store nor make it use a file it owns.
#   php-tests/harness/user-suite.sh path/to/ephpm.so
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
other=ephpm-test-other
if [ "$(id -u)" != 0 ]; then
    skip "needs root to run a process as another user"; summary users; exit 0
fi
id "$other" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$other"
tmp=$(mktemp -d); chmod 755 "$tmp"
cp "$1" "$tmp/ephpm.so"; chmod 644 "$tmp/ephpm.so"
store="users_$$"; squat="squat_$$"
seg="/dev/shm/ephpm.$(id -u).$store"
trap 'rm -rf "$tmp" "$seg" "/dev/shm/ephpm.$(id -u).$squat" "/dev/shm/ephpm.$(id -u "$other").$store"' EXIT
php_as() { # php_as USER CODE
    runuser -u "$1" -- php -n -d "extension=$tmp/ephpm.so" -d "ephpm.store_name=$store" -d ephpm.shm_size=2M -r "$2" 2>&1
}

php_as root '(new Ephpm\Kv())->set("secret", "root only");'
check "the segment is mode 0600" 600 "$(stat -c %a "$seg")"
check "another user's Kv sees its own store, not this one" NULL \
    "$(php_as "$other" 'var_export((new Ephpm\Kv())->get("secret"));')"
check "another user cannot open this user's segment file" denied \
    "$(php_as "$other" "echo @fopen('$seg', 'r') === false ? 'denied' : 'opened';")"
# A file planted at this user's path by someone else is refused, never used.
runuser -u "$other" -- sh -c "umask 0; : > /dev/shm/ephpm.$(id -u).$squat"
check "a segment file owned by another uid is refused with StoreException" refused \
    "$(php_as root "try { new Ephpm\Kv('shm://$squat'); echo 'used'; } catch (Ephpm\StoreException \$e) { echo str_contains(\$e->getMessage(), 'belongs to uid') ? 'refused' : \$e->getMessage(); }")"
summary users
