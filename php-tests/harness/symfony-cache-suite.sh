#!/usr/bin/env bash
# Symfony's own cache pool tests (symfony/cache's Tests/Adapter/AdapterTestCase, which
# extends cache/integration-tests' PSR-6 CachePoolTest, and Tests/Psr16CacheTest, the
# PSR-16 SimpleCacheTest through Symfony's Psr16Cache) on ephpm's two pools,
# Ephpm\Symfony\EphpmAdapter and Ephpm\Symfony\StaleCacheAdapter, under PHPUnit: the
# contract every Symfony pool is held to (a value whose unserialize throws is a miss,
# get(…, beta: INF) recomputes with the cached item, metadata on computed items…).
#   php-tests/harness/symfony-cache-suite.sh path/to/ephpm.so [shm|redis]
# With "redis" the pools are on a redis-server this script starts on a unix socket (the
# summary line is then "symfony-cache-redis: …"). Ends with one line
# "symfony-cache: N passed, N failed, N skipped" counting PHPUnit's test cases; each
# failed case is a line "FAIL - Class::test".
# Debian ships symfony/cache without its tests: they come from Debian's source package
# of the installed version (apt-get source symfony, as root; deb-src entries are added
# when there are none), fetched once and kept in target/symfony-cache-tests/VERSION.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
so=$(realpath "$1")
backend=${2:-shm}
label=symfony-cache; [ "$backend" != shm ] && label=symfony-cache-$backend
# One folder per version: the systems of php-tests/systems have other Symfonys.
cache="$root/target/symfony-cache-tests/$(dpkg-query -W -f='${source:Version}' php-symfony-cache 2>/dev/null)"

if [ ! -f /usr/bin/phpunit ] || [ ! -f /usr/share/php/Cache/IntegrationTests/CachePoolTest.php ] \
    || [ ! -f /usr/share/php/Symfony/Component/Cache/autoload.php ]; then
    skip "phpunit, php-cache-integration-tests and php-symfony-cache are needed"; summary "$label"; exit 0
fi

# Fetches the source package of the installed php-symfony-cache and keeps its
# src/Symfony/Component/Cache/Tests (their Fixtures included).
fetch_tests() {
    local work version
    version=$(dpkg-query -W -f='${source:Version}' php-symfony-cache 2>/dev/null)
    apt-cache showsrc symfony 2>/dev/null | grep -q '^Version:' || { add_deb_src; apt-get update -qq; }
    command -v xz >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq xz-utils >/dev/null
    work=$(mktemp -d)
    chmod 755 "$work"   # apt's _apt user downloads into it
    (cd "$work" && apt-get source --download-only -qq "symfony=$version" >/dev/null 2>&1) \
        || { echo "apt-get source symfony=$version failed"; rm -rf "$work"; return 1; }
    tar -xJf "$work"/symfony_*.orig.tar.xz -C "$work" --wildcards '*/src/Symfony/Component/Cache/Tests/*' \
        || { rm -rf "$work"; return 1; }
    rm -rf "$cache"; mkdir -p "$(dirname "$cache")"
    mv "$work"/symfony-*/src/Symfony/Component/Cache/Tests "$cache"
    echo "$version" > "$cache/VERSION"
    rm -rf "$work"
}

if [ ! -f "$cache/VERSION" ]; then
    if [ "$(id -u)" != 0 ]; then
        skip "Symfony's cache tests: fetching them needs root (apt-get source)"; summary "$label"; exit 0
    fi
    fetch_tests || { failed=1; echo "FAIL - Symfony's cache tests could not be fetched"; summary "$label"; exit 1; }
fi

tmp=$(mktemp -d)
store="sfcache_$$"
cleanup() {
    [ -f "$tmp/redis.pid" ] && kill "$(cat "$tmp/redis.pid")" 2>/dev/null
    rm -rf "$tmp" "/dev/shm/ephpm-$(id -u)/$store"
}
trap cleanup EXIT
dsn=""
if [ "$backend" = redis ]; then
    start_redis "$tmp"
    dsn="unix://$tmp/redis.sock"
fi
# PHPUnit needs extensions `php -n` lacks (dom, xml, mbstring), so the system's php.ini
# plus this extension; zend.assertions=1 because Symfony checks keys in assert() on
# some paths and its own suite runs so.
EPHPM_TEST_DSN=$dsn EPHPM_SYMFONY_CACHE_TESTS=$cache php -d zend.assertions=1 -d "extension=$so" \
    -d "ephpm.store_name=$store" -d ephpm.shm_size=32M /usr/bin/phpunit --do-not-cache-result \
    --bootstrap "$here/symfony-cache/bootstrap.php" --log-junit "$tmp/junit.xml" "$here/symfony-cache" > "$tmp/phpunit.log" 2>&1
# One line per test case from PHPUnit's JUnit log: "ok", "FAIL" or "skip", then its name.
php -r '
    foreach ((new SimpleXMLElement(file_get_contents($argv[1])))->xpath("//testcase") as $case) {
        $name = $case["class"] . "::" . $case["name"];
        if ($case->failure || $case->error) {
            $why = trim(strtok((string) ($case->failure ?: $case->error), "\n"));
            echo "FAIL - $name: $why\n";
        } elseif ($case->skipped) {
            echo "skip - $name\n";
        } else {
            echo "ok - $name\n";
        }
    }' "$tmp/junit.xml" > "$tmp/cases" 2>&1 || { echo "FAIL - no JUnit log from PHPUnit:"; tail -n 30 "$tmp/phpunit.log"; failed=1; }
cat "$tmp/cases"
passed=$((passed + $(grep -c '^ok - ' "$tmp/cases")))
failed=$((failed + $(grep -c '^FAIL - ' "$tmp/cases")))
skipped=$((skipped + $(grep -c '^skip - ' "$tmp/cases")))
if grep -q '^FAIL - ' "$tmp/cases"; then
    echo "--- phpunit"; sed -n '/^There w[ae]s/,$p' "$tmp/phpunit.log" | head -n 120
fi
summary "$label"
