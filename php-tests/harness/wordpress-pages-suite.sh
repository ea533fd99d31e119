#!/usr/bin/env bash
# A real WordPress (Debian's 6.1, theme twentytwentyone) behind nginx on 127.0.0.1 and
# php-fpm (4 workers) on a private MariaDB, with the ephpm object-cache drop-in in its
# wp-content: pages are served from the shared cache (fewer database queries than without
# the drop-in, in every worker and after a restart of php-fpm), a post written by a CLI
# process shows on the next page, and with the extension removed from php-fpm the site
# still serves, on WordPress's own cache, without a fatal error.
#   php-tests/harness/wordpress-pages-suite.sh path/to/ephpm.so
# Queries are counted by the mu-plugin wordpress-queries.php (the X-Queries header).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/wordpress-site.sh"
so=$(realpath "$1")
find_fpm wordpress-pages
for tool in nginx mariadbd curl; do
    if ! command -v "$tool" >/dev/null; then
        skip "$tool is not installed"; summary wordpress-pages; exit 0
    fi
done
if ! wp_have_files; then
    skip "WordPress or its theme is not unpacked in target/ (make deps)"; summary wordpress-pages; exit 0
fi
tmp=$(mktemp -d)
store="wppages_$$"
port=$((20000 + RANDOM % 20000))
url="http://127.0.0.1:$port"
ext=(-d "extension=$so" -d "ephpm.store_name=$store" -d ephpm.shm_size=32M)
cleanup() {
    wp_stop_nginx "$tmp"; wp_stop_fpm "$tmp"; stop_mariadb "$tmp"
    rm -rf "$tmp" "/dev/shm/ephpm-$(id -u)/$store"
}
trap cleanup EXIT

# get PATH: the page's status, X-Queries and X-Object-Cache as "status queries class",
# its body in $tmp/body.
get() {
    curl -s -D "$tmp/headers" -o "$tmp/body" "$url$1"
    awk 'NR == 1 { s = $2 } tolower($1) == "x-queries:" { q = $2 }
         tolower($1) == "x-object-cache:" { c = $2; if ($3 != "") c = c " " $3 }
         END { printf "%s %s %s", s, q, c }' <(tr -d '\r' < "$tmp/headers")
}
title() { grep -o '<title>[^<]*' "$tmp/body" | sed 's/<title>//; s/ &#8211; .*//'; }
fatal() { cat "$tmp"/fpm.log "$tmp"/php-error.log "$tmp"/nginx-error.log 2>/dev/null | grep -c -i 'fatal'; }

start_mariadb "$tmp" 2>/dev/null
check "a private MariaDB answers on its socket" 0 $?
wp_site "$tmp" "$url"
wp_cli "$tmp" -- install "ephpm WordPress test" >/dev/null
check "WordPress installs and is populated from the CLI (200 posts, 8 categories, pages, comments)" populated \
    "$(wp_cli "$tmp" -- populate)"

# Without the drop-in: core's request-local cache, what every page costs in queries.
wp_start_fpm "$tmp" 4 "${ext[@]}"
wp_start_nginx "$tmp" "$port"
check "nginx and php-fpm serve the front page, without a drop-in" "200 WP_Object_Cache" \
    "$(get / | awk '{ print $1, $3 }')"
read -r _ front_none _ < <(get /)
read -r _ archive_none _ < <(get /category/engineering/)
echo "# queries without the drop-in: front page $front_none, archive $archive_none"

# With the drop-in (a symlink, as the README installs it).
ln -s "$wp_root/php/WordPress/object-cache.php" "$tmp/site/wp-content/object-cache.php"
check "a CLI process loads the drop-in on the same store" "Ephpm\\WordPress\\ObjectCache ext" \
    "$(wp_cli "$tmp" "${ext[@]}" -- cache)"
read -r status front_cold class < <(get /)
check "the front page is served with the drop-in as WordPress's persistent cache" "200 Ephpm\\WordPress\\ObjectCache ext" "$status $class"
check "the front page has the site's title" "ephpm WordPress test" "$(title)"
read -r status front_warm _ < <(get /)
# Fewer than the first page with the drop-in, not only than without it: WordPress
# makes fewer queries with any persistent cache (transients skip the database), even
# one whose store cannot be reached, where every page costs what the first did.
check "the next front page makes fewer queries than the first with the drop-in ($front_warm < $front_cold) and than without it ($front_none)" yes \
    "$([ "$status" = 200 ] && [ "$front_warm" -lt "$front_cold" ] && [ "$front_warm" -lt "$front_none" ] && echo yes || echo "no: $status $front_warm")"
read -r status archive_cold _ < <(get /category/engineering/)
check "an archive page (a category) is served, 200, with its title" "200 Engineering" "$status $(title)"
read -r status archive_warm _ < <(get /category/engineering/)
check "the next archive page makes fewer queries than the first ($archive_warm < $archive_cold) and than without the drop-in ($archive_none)" yes \
    "$([ "$status" = 200 ] && [ "$archive_warm" -lt "$archive_cold" ] && [ "$archive_warm" -lt "$archive_none" ] && echo yes || echo "no: $status $archive_warm")"
check "the pages' cache is in the test's store" yes \
    "$(php -n "${ext[@]}" -r 'echo (new Ephpm\Kv())->stats()["entries"] > 100 ? "yes" : "no";')"
worst=0
for _ in $(seq 12); do
    read -r _ q _ < <(get /)
    [ "$q" -gt "$worst" ] && worst=$q
done
check "12 more front pages, across the 4 workers, all as cheap as the warm one (at most $front_warm queries)" "$front_warm" "$worst"
# The cache outlives the workers: php-fpm restarted, its first page is served warm.
wp_stop_fpm "$tmp"
wp_start_fpm "$tmp" 4 "${ext[@]}"
read -r status q _ < <(get /)
check "after php-fpm restarts, the first front page is served from the store ($q < $front_cold queries)" yes \
    "$([ "$status" = 200 ] && [ "$q" -lt "$front_cold" ] && echo yes || echo "no: $status $q")"
# Invalidation across processes: a post written by a CLI process shows on the next page.
fresh="Written from the CLI $$"
id=$(wp_cli "$tmp" "${ext[@]}" -- post "$fresh")
get / >/dev/null
check "a post written by a CLI process (id $id) is on the next front page" yes "$(grep -q "$fresh" "$tmp/body" && echo yes || echo no)"
read -r status _ _ < <(get "/written-from-the-cli-$$/")
check "and its own page is served" "200 $fresh" "$status $(title)"
check "no fatal error in the php-fpm, PHP or nginx logs" 0 "$(fatal)"
check "no PHP warning, notice or deprecation while the drop-in served" 0 \
    "$(cat "$tmp/php-error.log" 2>/dev/null | grep -c -E 'PHP (Warning|Notice|Deprecated)')"

# The extension removed from php-fpm, the drop-in still in wp-content.
wp_stop_fpm "$tmp"
wp_start_fpm "$tmp" 4
read -r status _ class < <(get /)
check "without the extension the front page is still served, on core's cache" "200 WP_Object_Cache" "$status $class"
check "with the site's title" "ephpm WordPress test" "$(title)"
check "and the CLI's post" yes "$(grep -q "$fresh" "$tmp/body" && echo yes || echo no)"
read -r status _ _ < <(get /category/engineering/)
check "the archive page too" "200 Engineering" "$status $(title)"
check "no fatal error in the logs" 0 "$(fatal)"
check "the drop-in said why in PHP's error log" yes \
    "$(grep -q 'ephpm object cache: the ephpm extension is not loaded' "$tmp/php-error.log" 2>/dev/null && echo yes || echo no)"
wp_stop_fpm "$tmp"
rm -f "/dev/shm/ephpm-$(id -u)/$store"
check "the store's segment is removed" no "$([ -e "/dev/shm/ephpm-$(id -u)/$store" ] && echo yes || echo no)"
summary wordpress-pages
