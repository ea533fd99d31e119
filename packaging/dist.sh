#!/usr/bin/env bash
# make dist: the release asset PIE downloads instead of building, when composer.json's
# php-ext.download-url-method lists pre-packaged-binary: a .tgz with ephpm.so at its
# root, named as PIE looks it up for the PHP that php-config names,
#   php_ephpm-<version>_php<major.minor>-<arch>-<os>-<libc>[-debug]-<nts|zts>.tgz
# and its sha256 (a sha256sum -c file). Prints the .tgz's path.
#   packaging/dist.sh VERSION EPHPM_SO OUT_DIR
set -euo pipefail
version=$1 so=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
php=$(${PHP_CONFIG:-php-config} --php-binary)
info=$("$php" -n -i)

php_version=$("$php" -n -r 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;')
case "$(uname -m)" in   # PIE's names: x86_64, arm64, x86
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) arch=x86 ;;
esac
case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *BSD) os=bsd ;;
    *) echo "dist: no PIE name for $(uname -s)" >&2; exit 1 ;;
esac
if [ "$os" != linux ]; then libc=bsdlibc; elif ldd --version 2>&1 | grep -qi musl; then libc=musl; else libc=glibc; fi
debug=""; grep -q '^Debug Build => yes' <<<"$info" && debug=-debug
ts=-nts; grep -q '^Thread Safety => enabled' <<<"$info" && ts=-zts

name=php_ephpm-${version}_php${php_version}-${arch}-${os}-${libc}${debug}${ts}.tgz
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
install -m 0755 "$so" "$stage/ephpm.so"
install -m 0644 "$root/stubs/ephpm.stub.php" "$root/README.md" "$root/CHANGELOG.md" "$stage/"
install -d "$stage/docs" && install -m 0644 "$root"/docs/*.md "$root"/docs/*.png "$stage/docs/"
out=$(mkdir -p "$out" && cd "$out" && pwd)
# Reproducible: sorted names, fixed owner and times.
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - ephpm.so ephpm.stub.php README.md CHANGELOG.md docs \
    | gzip -n -9 >"$out/$name"
(cd "$out" && sha256sum "$name" >"$name.sha256")
echo "$out/$name"
