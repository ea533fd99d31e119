#!/usr/bin/env bash
# make test-install: every way in, each installed into this machine's PHP, checked, and
# removed again. Needs root, Debian's PHP 8.2 (cli, fpm, dev) and cgi-fcgi, and the
# binaries `make binaries` built (target/ephpm.so, target/release/ephpm-node, ephpm,
# ephpm-resp): the make targets below run with -o binaries, so that they test their own
# recipes on those.
#   1. configure names what to install when cargo is missing or too old, or libclang missing;
#   2. PIE's build: a clean clone of the committed tree, its `git archive` (what PIE
#      downloads: .gitattributes' export-ignore applied), then in ext/ exactly
#      phpize && ./configure && make && make install, then enabled as PIE does on Debian;
#   3. make install / make uninstall (ephpm-node and ephpm-resp in /usr/local/bin);
#   4. make deb, apt-get install ./ephpm_*.deb: cli and fpm load it, php-fpm serves a
#      request with Ephpm\Kv, the units of ephpm-node and ephpm-resp are installed
#      disabled, the packaged ephpm-resp with its default file's options serves a store
#      PHP reads, apt-get remove --purge leaves nothing behind (and a package whose postrm
#      forgets to disable the module is caught);
#   5. make dist: the asset PIE's pre-packaged-binary lookup finds, and its checksum.
# Ends with "install: N passed, N failed, N skipped". Takes minutes: step 2 builds the
# crate from scratch, as PIE does.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
label=install
if [ "$(id -u)" != 0 ]; then skip "needs root (it installs into this machine's PHP)"; summary "$label"; exit 0; fi
find_fpm "$label"

version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)
rust_min=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' "$root/Cargo.toml")
ext_dir=$(php-config --extension-dir)
php_version=$(php-config --version | cut -d. -f1,2)
mods=/etc/php/$php_version/mods-available
store=install_suite_$$
tmp=$(mktemp -d)
fpm_pid=""
resp_pid=""

# Anything of ephpm's in PHP's folders, dpkg's database or phpenmod's state: one per line.
leftovers() {
    { ls "$ext_dir"/ephpm.so /usr/bin/ephpm-node /usr/local/bin/ephpm-node /lib/systemd/system/ephpm-node.service \
        /etc/default/ephpm-node /usr/bin/ephpm-resp /usr/local/bin/ephpm-resp \
        /lib/systemd/system/ephpm-resp.service /etc/default/ephpm-resp /usr/share/ephpm 2>/dev/null
      find /etc/php /var/lib/php/modules -name '*ephpm*' 2>/dev/null
      dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' ephpm 2>/dev/null | grep -v '^un'
    } | sort -u
}
if [ -n "$(leftovers)" ]; then
    echo "ephpm is already installed into this machine's PHP; remove it first:"; leftovers
    summary "$label"; exit 1
fi
cleanup() {
    [ -n "$fpm_pid" ] && kill -QUIT "$fpm_pid" 2>/dev/null && wait "$fpm_pid" 2>/dev/null
    [ -n "$resp_pid" ] && kill "$resp_pid" 2>/dev/null && wait "$resp_pid" 2>/dev/null
    if dpkg-query -W ephpm >/dev/null 2>&1; then apt-get remove --purge -y -qq ephpm >/dev/null 2>&1; fi
    phpdismod -v "$php_version" -s ALL ephpm 2>/dev/null
    rm -f "$ext_dir/ephpm.so" "$mods/ephpm.ini" /usr/local/bin/ephpm-node /usr/local/bin/ephpm-resp
    find /etc/php -name '*ephpm*' -delete 2>/dev/null
    find /var/lib/php/modules -name ephpm -delete 2>/dev/null
    rm -rf "$tmp" /dev/shm/ephpm-0/"$store"*
}
trap cleanup EXIT
loaded() { # loaded COMMAND...: yes if the command's -m lists ephpm
    "$@" -m 2>/dev/null | grep -qx ephpm && echo yes || echo no
}

# 1. configure's checks, on a tree phpize has prepared: no cargo anywhere (a PATH without
# it and a HOME without ~/.cargo), and a cargo that says it is 1.80.
mkdir -p "$tmp/conf/ext" "$tmp/home"
cp "$root/Cargo.toml" "$tmp/conf/" && cp "$root/ext/config.m4" "$root/ext/Makefile.frag" "$tmp/conf/ext/"
(cd "$tmp/conf/ext" && phpize >/dev/null 2>&1)
no_cargo_path=$(tr ':' '\n' <<<"$PATH" | while read -r d; do [ -x "$d/cargo" ] || printf '%s:' "$d"; done)
out=$(cd "$tmp/conf/ext" && env PATH="$no_cargo_path" HOME="$tmp/home" ./configure 2>&1)
check "configure without cargo fails, naming what to install" \
    "configure: error: ephpm is written in Rust and builds with cargo, which was not found: install Rust $rust_min or newer with rustup" \
    "$(grep -o 'configure: error: .* or newer with rustup' <<<"$out")"
printf '#!/bin/sh\necho "cargo 1.80.0 (376290515 2024-07-16)"\n' >"$tmp/old-cargo" && chmod +x "$tmp/old-cargo"
out=$(cd "$tmp/conf/ext" && ./configure --with-cargo="$tmp/old-cargo" 2>&1)
check "configure with cargo 1.80 fails: too old, and how to update" \
    "configure: error: $tmp/old-cargo is cargo 1.80.0, too old for ephpm: install Rust $rust_min or newer" \
    "$(grep -o 'configure: error: .* or newer' <<<"$out")"
# No libclang: every libclang on the machine hidden under /dev/null, in a mount namespace
# of this command alone.
out=$(cd "$tmp/conf/ext" && unshare -m sh -c 'for f in /usr/lib/llvm-*/lib/libclang*.so* /usr/lib/*-linux-gnu/libclang*.so*; do
    mount --bind /dev/null "$f"; done; ./configure' 2>&1)
check "configure without libclang fails, naming the package" \
    "configure: error: ephpm's build reads PHP's headers with libclang, which was not found: install libclang-dev" \
    "$(grep -o "configure: error: .* install libclang-dev" <<<"$out")"
out=$(cd "$tmp/conf/ext" && ./configure 2>&1)
check "configure with this machine's cargo goes through" "checking whether cargo is Rust $rust_min or newer... yes, $(cargo --version | cut -d' ' -f2)" \
    "$(grep 'checking whether cargo is Rust' <<<"$out")"

# 2. PIE's build, from what PIE downloads.
git clone --quiet "$root" "$tmp/clone"
mkdir "$tmp/pie" && git -C "$tmp/clone" archive HEAD | tar -x -C "$tmp/pie"
check "the source download leaves out what PIE does not need (php-tests, bench, Makefile)" "" \
    "$(ls -d "$tmp/pie/php-tests" "$tmp/pie/bench" "$tmp/pie/Makefile" 2>/dev/null)"
started=$SECONDS
(cd "$tmp/pie/ext" && phpize && ./configure && make) >"$tmp/pie-build.log" 2>&1
echo "   (phpize, configure and make: $((SECONDS - started)) s)"
check "phpize && ./configure && make builds modules/ephpm.so" yes \
    "$([ -f "$tmp/pie/ext/modules/ephpm.so" ] && echo yes || { tail -n 20 "$tmp/pie-build.log"; echo no; })"
# make install copies only: it runs without cargo, as sudo or PIE's elevation would.
(cd "$tmp/pie/ext" && env PATH="$no_cargo_path" make install) >"$tmp/pie-install.log" 2>&1
check "make install (without cargo on the PATH) puts ephpm.so in $ext_dir" yes \
    "$([ -f "$ext_dir/ephpm.so" ] && echo yes || { tail -n 5 "$tmp/pie-install.log"; echo no; })"
# Enabled the way PIE does it on Debian: an ini in mods-available and phpenmod.
echo "extension=ephpm" >"$mods/ephpm.ini" && phpenmod -v "$php_version" -s cli ephpm
check "php -m lists ephpm" yes "$(loaded php)"
check "... at the crate's version ($version)" "$version" "$(php -r 'echo phpversion("ephpm");')"
phpdismod -p -v "$php_version" -s cli ephpm && rm -f "$mods/ephpm.ini" "$ext_dir/ephpm.so"
check "... and, removed again, php -m does not" no "$(loaded php)"

# 3. make install: the extension, ephpm-node and ephpm-resp, enabled with phpenmod; no
# apt-get.
check "make install installs no package" "" "$(make -s -n -C "$root" install | grep -E 'apt-get|dpkg')"
make -s -o binaries -C "$root" install >"$tmp/make-install.log" 2>&1 || tail -n 20 "$tmp/make-install.log"
check "make install: php -m lists ephpm" yes "$(loaded php)"
check "make install: php-fpm -m lists ephpm" yes "$(loaded "$fpm")"
check "make install: ephpm-node $version in /usr/local/bin" "ephpm-node $version" "$(/usr/local/bin/ephpm-node --version 2>&1)"
check "make install: ephpm-resp $version in /usr/local/bin" "ephpm-resp $version" "$(/usr/local/bin/ephpm-resp --version 2>&1)"
make -s -C "$root" uninstall >>"$tmp/make-install.log" 2>&1 || tail -n 20 "$tmp/make-install.log"
check "make uninstall leaves nothing behind" "" "$(leftovers)"

# 4. The Debian package.
make -s -o binaries -C "$root" deb >"$tmp/deb.out" 2>"$tmp/deb.log" || tail -n 20 "$tmp/deb.log"
deb=$(tail -n 1 "$tmp/deb.out")
check "make deb builds target/ephpm_${version}_$(dpkg --print-architecture).deb" \
    "$root/target/ephpm_${version}_$(dpkg --print-architecture).deb" "$deb"
check "it depends on this PHP's API" "phpapi-$(php-config --phpapi)" \
    "$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | grep -o 'phpapi-[0-9]*')"
contents=$(dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|')
for path in "$ext_dir/ephpm.so" "$mods/ephpm.ini" /usr/bin/ephpm-node /lib/systemd/system/ephpm-node.service \
    /usr/bin/ephpm-resp /lib/systemd/system/ephpm-resp.service /etc/default/ephpm-resp \
    /usr/share/ephpm/ephpm.stub.php /usr/share/ephpm/php/autoload.php; do
    check "the package holds $path" "$path" "$(grep -x "$path" <<<"$contents")"
done
check "/etc/default/ephpm-resp is a conffile (an administrator's edits survive upgrades)" /etc/default/ephpm-resp \
    "$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles | grep -x /etc/default/ephpm-resp)"
apt-get install -y -qq "$deb" >"$tmp/apt.log" 2>&1
check "apt-get install ./$(basename "$deb")" "ii" "$(dpkg-query -W -f '${db:Status-Abbrev}' ephpm 2>/dev/null | tr -d ' ')"
check "php -m lists ephpm (enabled for cli)" yes "$(loaded php)"
check "php-fpm -m lists ephpm (enabled for fpm)" yes "$(loaded "$fpm")"
check "ephpm-node's unit is installed, not enabled" "no" \
    "$(ls /etc/systemd/system/*.wants/ephpm-node.service >/dev/null 2>&1 && echo yes || echo no)"
check "ephpm-resp's unit is installed, not enabled" "no" \
    "$(ls /etc/systemd/system/*.wants/ephpm-resp.service >/dev/null 2>&1 && echo yes || echo no)"
if command -v systemd-analyze >/dev/null; then
    check "systemd-analyze verify finds nothing wrong with ephpm-resp.service" "" \
        "$(systemd-analyze verify /lib/systemd/system/ephpm-resp.service 2>&1)"
else skip "systemd-analyze is not installed"; fi

# The packaged ephpm-resp with the default file's options (on a store of this suite's,
# as root): what redis-cli writes on its socket, PHP reads; SIGTERM stops it, exit 0,
# its socket gone.
if command -v redis-cli >/dev/null; then
    resp_sock=/dev/shm/ephpm-0/${store}_resp.resp.sock
    (. /etc/default/ephpm-resp && exec /usr/bin/ephpm-resp $EPHPM_RESP_OPTS --store "${store}_resp" --shm-size 2M) \
        2>"$tmp/resp.log" &
    resp_pid=$!
    for _ in $(seq 100); do [ -S "$resp_sock" ] && break; sleep 0.05; done
    redis-cli -s "$resp_sock" SET greeting "from redis-cli" >/dev/null 2>&1
    check "ephpm-resp with /etc/default/ephpm-resp's options: what redis-cli SETs, PHP reads" "from redis-cli" \
        "$(php -d ephpm.store_name="${store}_resp" -d ephpm.shm_size=2M -r 'echo (new Ephpm\Kv())->get("greeting");' 2>&1)"
    kill -TERM "$resp_pid"; wait "$resp_pid"; rc=$?; resp_pid=""
    check "... and SIGTERM stops it: exit 0, its socket removed" "0 gone" \
        "$rc $([ -e "$resp_sock" ] && echo there || echo gone)"
    rm -f /dev/shm/ephpm-0/"${store}_resp"*
else skip "redis-cli is not installed (redis-tools)"; fi

# A php-fpm of our own on a unix socket, with the machine's fpm ini (what the package
# enabled), serving a request that writes and reads through Ephpm\Kv.
mkdir "$tmp/www"
cat >"$tmp/www/kv.php" <<'PHP'
<?php
$kv = new Ephpm\Kv();
$n = $kv->increment('requests');
echo json_encode(['ephpm' => phpversion('ephpm'), 'requests' => $n, 'sapi' => PHP_SAPI]);
PHP
cat >"$tmp/fpm.conf" <<CONF
[global]
pid = $tmp/fpm.pid
error_log = $tmp/fpm.log
daemonize = no
[install_suite]
user = root
group = root
listen = $tmp/fpm.sock
pm = static
pm.max_children = 2
php_admin_value[ephpm.store_name] = $store
php_admin_value[ephpm.shm_size] = 2M
CONF
"$fpm" -y "$tmp/fpm.conf" -R -F &
fpm_pid=$!
for _ in $(seq 100); do [ -S "$tmp/fpm.sock" ] && break; sleep 0.05; done
request() {
    SCRIPT_FILENAME="$tmp/www/kv.php" SCRIPT_NAME=/kv.php REQUEST_METHOD=GET QUERY_STRING="" \
        cgi-fcgi -bind -connect "$tmp/fpm.sock" 2>/dev/null | sed '1,/^\r\{0,1\}$/d'
}
request >/dev/null
check "php-fpm serves a request that uses Ephpm\\Kv (the second sees the first's write)" \
    "{\"ephpm\":\"$version\",\"requests\":2,\"sapi\":\"fpm-fcgi\"}" "$(request)"
kill -QUIT "$fpm_pid" && wait "$fpm_pid" 2>/dev/null; fpm_pid=""
rm -f /dev/shm/ephpm-0/"$store"*

apt-get remove --purge -y -qq ephpm >"$tmp/apt.log" 2>&1
check "apt-get remove --purge ephpm leaves no ini, link, .so or state behind" "" "$(leftovers)"
check "... and php -m no longer lists it" no "$(loaded php)"

# The same check on a package whose postrm forgets to disable the module: it must fail.
dpkg-deb -R "$deb" "$tmp/broken"
printf '#!/bin/sh\nexit 0\n' >"$tmp/broken/DEBIAN/postrm"
dpkg-deb --root-owner-group -b "$tmp/broken" "$tmp/ephpm-broken.deb" >/dev/null
apt-get install -y -qq "$tmp/ephpm-broken.deb" >"$tmp/apt.log" 2>&1
apt-get remove --purge -y -qq ephpm >>"$tmp/apt.log" 2>&1
check "a postrm that forgets phpdismod leaves links behind, and the check sees them" yes \
    "$(leftovers | grep -q "conf.d/20-ephpm.ini" && echo yes || echo no)"
cleanup_links=$(leftovers); find /etc/php -name '*ephpm*' -delete; find /var/lib/php/modules -name ephpm -delete
[ -n "$cleanup_links" ] && check "... which this suite removed again" "" "$(leftovers)"

# 5. The release asset.
make -s -o binaries -C "$root" dist >"$tmp/dist.out" 2>"$tmp/dist.log" || tail -n 20 "$tmp/dist.log"
asset=$(tail -n 1 "$tmp/dist.out")
check "make dist names the asset as PIE looks for it on this machine (PHP $php_version NTS, x86_64, glibc)" \
    "php_ephpm-${version}_php${php_version}-x86_64-linux-glibc-nts.tgz" "$(basename "$asset")"
check "its .sha256 verifies" "$(basename "$asset"): OK" "$(cd "$(dirname "$asset")" && sha256sum -c "$(basename "$asset").sha256" 2>&1)"
mkdir "$tmp/asset" && tar -xzf "$asset" -C "$tmp/asset"
check "ephpm.so is at the asset's root (where PIE takes it from)" "$version" \
    "$(php -n -d extension="$tmp/asset/ephpm.so" -r 'echo phpversion("ephpm");' 2>&1)"

summary "$label"
