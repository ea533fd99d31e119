#!/usr/bin/env bash
# Another Debian release in a folder, for the suites that must pass on every stack our
# users run (php-tests/systems/NAME.conf says which suites, PHP and packages).
#   php-tests/harness/system.sh make NAME        builds target/systems/NAME/root (once)
#   php-tests/harness/system.sh run NAME CMD...  runs CMD in it, as root
# The system is made by debootstrap from the mirror this machine's apt uses, checked
# against Debian's archive keyring, and kept while its .conf, packages.conf and
# make_system are unchanged (a stamp holds their hash); `make clean` removes it. CMD runs in a mount
# namespace of its own (its mounts vanish with it, whatever kills it, so removing the
# folder never reaches through a bind mount) with /proc, /dev and an empty /tmp,
# and this tree, cargo and rustup bound at the same paths as here, so that a path means
# the same inside and out and the build reuses this machine's toolchain and crates.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
what=$1 name=$2; shift 2
conf="$root/php-tests/systems/$name.conf"
[ -f "$conf" ] || { echo "no system $name: $conf is missing" >&2; exit 2; }
# shellcheck source=../systems/packages.conf
. "$root/php-tests/systems/packages.conf"
# shellcheck source=../systems/newest.conf
. "$conf"
# PHP's own packages, of the version the .conf names.
php_packages=""
for p in cli dev fpm cgi mbstring xml intl common readline; do php_packages="$php_packages php$php-$p"; done
dir="$root/target/systems/$name"
sysroot="$dir/root"

# The mirror of the system's own apt sources (deb822 or one-line), never a fixed host.
mirror() {
    { sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null || true
      sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\).*/\2/p' /etc/apt/sources.list 2>/dev/null || true; } \
        | grep -v security | head -n 1
}

make_system() {
    [ "$(cat "$dir/stamp" 2>/dev/null)" = "$stamp" ] && return 0
    command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    local url first
    url=$(mirror); first=${suites%% *}
    [ -n "$url" ] || { echo "no Debian mirror in this machine's apt sources" >&2; exit 1; }
    echo "system $name: debootstrap $first from $url"
    rm -rf "$dir"; mkdir -p "$dir"
    debootstrap --variant=minbase --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
        "$first" "$sysroot.tmp" "$url" > "$dir/debootstrap.log" 2>&1 \
        || { tail -n 20 "$dir/debootstrap.log" >&2; exit 1; }
    for s in $suites; do echo "deb $url $s main"; done > "$sysroot.tmp/etc/apt/sources.list"
    # sid's and experimental's Release files are past their Valid-Until on the copy served here.
    echo 'Acquire::Check-Valid-Until "false";' > "$sysroot.tmp/etc/apt/apt.conf.d/99ephpm-valid-until"
    # debootstrap writes no /etc/hosts, and without one "localhost" does not resolve: Redis'
    # Tcl runner's clients, which connect to it by that name, time out on every unit.
    printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' > "$sysroot.tmp/etc/hosts"
    # No service starts inside: the suites start what they need, by pid.
    printf '#!/bin/sh\nexit 101\n' > "$sysroot.tmp/usr/sbin/policy-rc.d"; chmod 755 "$sysroot.tmp/usr/sbin/policy-rc.d"
    sysroot="$sysroot.tmp" run_in apt-get update -qq
    local pkgs="" p
    for p in $php_packages; do pkgs="$pkgs $p/${php_from:-${first}}"; done
    # What php_first installs is held there, so that packages_release never replaces it.
    # shellcheck disable=SC2086 # package lists are words
    [ -z "${php_first:-}" ] || { sysroot="$sysroot.tmp" run_in apt-get install -y -qq --no-install-recommends $php_first \
        && sysroot="$sysroot.tmp" run_in apt-mark hold ${php_first%%/*}; } > "$dir/install.log" 2>&1
    # shellcheck disable=SC2086 # package lists are words
    sysroot="$sysroot.tmp" run_in apt-get install -y -qq --no-install-recommends $pkgs >> "$dir/install.log" 2>&1 \
        && sysroot="$sysroot.tmp" run_in apt-get install -y -qq --no-install-recommends \
            ${packages_release:+-t "$packages_release"} $packages >> "$dir/install.log" 2>&1 \
        || { grep -E '^E:|conflict|Depends' "$dir/install.log" | head -n 20 >&2; exit 1; }
    sysroot="$sysroot.tmp" run_in update-alternatives --set php "/usr/bin/php$php" >/dev/null
    sysroot="$sysroot.tmp" run_in apt-get clean
    mv "$sysroot.tmp" "$sysroot"
    echo "$stamp" > "$dir/stamp"
}

run_in() {
    local cargo_home=${CARGO_HOME:-$HOME/.cargo} rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
    unshare --mount --propagation private bash -c '
        set -e
        r=$1; shift
        mount -t proc proc "$r/proc"
        mount --rbind /dev "$r/dev"
        mount -t tmpfs -o mode=1777 tmpfs "$r/tmp"
        while [ "$1" != -- ]; do
            [ -d "$1" ] && { mkdir -p "$r$1"; mount --bind "$1" "$r$1"; }
            shift
        done
        shift
        exec chroot "$r" env -i PATH="$PATH_IN" HOME=/root LANG=C.UTF-8 TERM=dumb CI="${CI:-}" \
            CARGO_HOME="$CARGO_IN" RUSTUP_HOME="$RUSTUP_IN" DEBIAN_FRONTEND=noninteractive "$@"
    ' _ "$sysroot" "$root" "$cargo_home" "$rustup_home" -- "$@"
}
export PATH_IN="${CARGO_HOME:-$HOME/.cargo}/bin:/usr/sbin:/usr/bin:/sbin:/bin"
export CARGO_IN="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_IN="${RUSTUP_HOME:-$HOME/.rustup}"

# The stamp: the .conf, packages.conf and how make_system makes a system (a change to
# any of them makes it anew).
stamp=$(cat "$root/php-tests/systems/packages.conf" "$conf" <(declare -f make_system) | sha256sum | cut -d' ' -f1)

case $what in
    make) make_system ;;
    run) make_system; run_in "$@" ;;
    *) echo "usage: system.sh make|run NAME [CMD...]" >&2; exit 2 ;;
esac
