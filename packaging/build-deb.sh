#!/usr/bin/env bash
# make deb: builds ephpm_<version>_<arch>.deb with dpkg-deb from an extension and
# programs already built (ephpm-node, ephpm, ephpm-resp: each goes to /usr/bin), for
# the PHP that php-config names (Debian's, whose layout the package follows: the
# extension dir, /etc/php/<major.minor>/mods-available).
#   packaging/build-deb.sh VERSION EPHPM_SO OUT_DIR PROGRAM...
# Prints the path of the .deb. PHP_CONFIG (default php-config) picks another PHP;
# DEBFULLNAME and DEBEMAIL (default: git's user) name the maintainer, as for dch.
set -euo pipefail
version=$1 so=$2 out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
php_config=${PHP_CONFIG:-php-config}

arch=$(dpkg --print-architecture)
ext_dir=$("$php_config" --extension-dir)
php_api=$("$php_config" --phpapi)
php_version=$("$php_config" --version | cut -d. -f1,2)
if "$("$php_config" --php-binary)" -n -i | grep -q '^Thread Safety => enabled'; then ts=ZTS; else ts=NTS; fi
maintainer="${DEBFULLNAME:-$(git -C "$root" config user.name || echo ephpm)} <${DEBEMAIL:-$(git -C "$root" config user.email || echo "root@$(hostname -f)")}>"

name=ephpm_${version}_${arch}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pkg=$stage/$name
install -d "$pkg/DEBIAN"
install -D -m 0644 "$so" "$pkg$ext_dir/ephpm.so"
shlib_args=(-e"$pkg$ext_dir/ephpm.so")
for program in "$@"; do
    install -D -m 0755 "$program" "$pkg/usr/bin/$(basename "$program")"
    shlib_args+=(-e"$pkg/usr/bin/$(basename "$program")")
done
install -D -m 0644 "$here/ephpm.ini" "$pkg/etc/php/$php_version/mods-available/ephpm.ini"
install -D -m 0644 "$here/ephpm-node.service" "$pkg/lib/systemd/system/ephpm-node.service"
install -D -m 0644 "$here/ephpm-node.default" "$pkg/etc/default/ephpm-node"
install -D -m 0644 "$here/ephpm-resp.service" "$pkg/lib/systemd/system/ephpm-resp.service"
install -D -m 0644 "$here/ephpm-resp.default" "$pkg/etc/default/ephpm-resp"
install -D -m 0644 "$root/stubs/ephpm.stub.php" "$pkg/usr/share/ephpm/ephpm.stub.php"
# The Symfony and Laravel classes (and their templates), for applications without
# Composer (php/autoload.php).
(cd "$root" && find php -type f ! -name composer.json -print0 | xargs -0 -I{} install -D -m 0644 {} "$pkg/usr/share/ephpm/{}")
install -D -m 0644 "$root/README.md" "$pkg/usr/share/doc/ephpm/README.md"
install -D -m 0644 "$root/CHANGELOG.md" "$pkg/usr/share/doc/ephpm/CHANGELOG.md"
install -d "$pkg/usr/share/doc/ephpm/docs" && install -m 0644 "$root"/docs/*.md "$root"/docs/*.png "$pkg/usr/share/doc/ephpm/docs/"
install -D -m 0644 "$here/copyright" "$pkg/usr/share/doc/ephpm/copyright"

# The shared libraries the binaries need, as Debian's own packages compute them
# (dpkg-shlibdeps reads a debian/control). PHP's symbols are the running PHP's: no library.
shlibs=$(cd "$stage" && mkdir debian && printf 'Source: ephpm\n\nPackage: ephpm\nArchitecture: any\n' >debian/control \
    && dpkg-shlibdeps -O --warnings=0 "${shlib_args[@]}" | sed -n 's/^shlibs:Depends=//p')
rm -rf "$stage/debian"
[ -n "$shlibs" ] || { echo "dpkg-shlibdeps found no library dependencies" >&2; exit 1; }

subst() {
    sed -e "s|@VERSION@|$version|g" -e "s|@ARCH@|$arch|g" -e "s|@PHPAPI@|$php_api|g" \
        -e "s|@PHP_VERSION@|$php_version|g" -e "s|@THREAD_SAFETY@|$ts|g" -e "s|@MAINTAINER@|$maintainer|g" \
        -e "s|@SHLIBS_DEPENDS@|$shlibs|g" -e "s|@INSTALLED_SIZE@|$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)|g" "$1"
}
subst "$here/deb/control.in" >"$pkg/DEBIAN/control"
for script in postinst prerm postrm; do
    subst "$here/deb/$script.in" >"$pkg/DEBIAN/$script"
    chmod 0755 "$pkg/DEBIAN/$script"
done
printf '/etc/php/%s/mods-available/ephpm.ini\n/etc/default/ephpm-node\n/etc/default/ephpm-resp\n' "$php_version" >"$pkg/DEBIAN/conffiles"
(cd "$pkg" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) >"$pkg/DEBIAN/md5sums"

out=$(mkdir -p "$out" && cd "$out" && pwd)   # an absolute path, for apt-get install
dpkg-deb --root-owner-group -Zxz --build "$pkg" "$out/$name.deb" >/dev/null
echo "$out/$name.deb"
