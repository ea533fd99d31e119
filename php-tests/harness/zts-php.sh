#!/usr/bin/env bash
# Builds a thread-safe (ZTS) PHP 8.2 from Debian's php8.2 source package, with only what
# the phpt suite needs, and prints the folder it is installed in. Kept between runs: the
# second run finds target/zts/php-<version>/bin/php and prints at once.
#   php-tests/harness/zts-php.sh          (as make test-zts runs it)
# Needs deb-src lines for Debian's archive (apt-cache showsrc php8.2 must answer) and
# dpkg-dev; the build runs at nice 19, one job, as the machine is shared.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
zts=$root/target/zts
mkdir -p "$zts"

# session, pcntl, posix (shared: two tests load it with -d extension=posix), mbstring
# (without the regex part, which would need oniguruma), ctype, tokenizer, filter, openssl,
# and libxml, dom, xml, xmlwriter (PHPUnit's) for the Symfony and Laravel tests; embed
# (static: a shared libphp would make libtool compile every file twice) for a host that
# runs PHP threads.
options=(--enable-zts --disable-all --enable-cli --disable-cgi --disable-phpdbg --without-pear
    --enable-embed=static --enable-session --enable-pcntl --enable-posix=shared
    --enable-mbstring --disable-mbregex --enable-ctype --enable-tokenizer --enable-filter
    --with-openssl --with-external-pcre --with-libxml --enable-dom --enable-xml --enable-xmlwriter)

# Built, thread-safe, and with these options (a build with other options is redone).
built() {
    [ -x "$1/bin/php" ] && "$1/bin/php" -n -r 'exit(PHP_ZTS ? 0 : 1);' 2>/dev/null \
        && [ "$(cat "$1/ephpm-configure-options" 2>/dev/null)" = "${options[*]}" ]
}

# A tree already built for any version is good enough: the archive moves on, the cache stays.
for prefix in "$zts"/php-8.2.*; do
    if built "$prefix"; then echo "$prefix"; exit 0; fi
done

versions=$(apt-cache showsrc php8.2 2>/dev/null | sed -n 's/^Version: //p' | sort -rV -u)
[ -n "$versions" ] || { echo "apt-cache showsrc php8.2 finds nothing: add deb-src lines for Debian's archive and run apt-get update" >&2; exit 1; }

# The newest version whose files the archive still has (one time the newest's were missing).
download=$zts/download
for version in $versions; do
    rm -rf "$download"; mkdir -p "$download"
    if (cd "$download" && apt-get source -qq --download-only "php8.2=$version" >&2); then break; fi
    version=""
done
[ -n "$version" ] || { echo "no php8.2 source version could be downloaded" >&2; exit 1; }

upstream=${version%%-*}
prefix=$zts/php-$upstream
src=$zts/src-$upstream
rm -rf "$src"
dpkg-source -x "$download"/php8.2_"$version".dsc "$src" >&2   # Debian's patches applied
rm -rf "$download" "$zts"/php8.2_*   # dpkg-source links the upstream tarball beside the tree

cd "$src"
log=$zts/build-$upstream.log
echo "building ZTS PHP $upstream in $src (log: $log)" >&2
{
    # Debian's patches touch configure.ac and config.m4 files, as its own build does.
    ./buildconf --force
    nice -n 19 ./configure --prefix="$prefix" --with-config-file-path="$prefix/etc" "${options[@]}"
    nice -n 19 make -j1
    rm -rf "$prefix"
    make install
    echo "${options[*]}" >"$prefix/ephpm-configure-options"
} >"$log" 2>&1 || { tail -n 30 "$log" >&2; echo "the ZTS PHP build failed: $log" >&2; exit 1; }
built "$prefix" || { echo "$prefix/bin/php is not a thread-safe PHP" >&2; exit 1; }
rm -rf "$src"
echo "$prefix"
