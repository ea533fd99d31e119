#!/usr/bin/env bash
# Debian's WordPress of this machine's (or system's) release, unpacked into DEST (not
# installed: its dependencies would bring a web server), with the PHP libraries its files
# link to (php-getid3, and libphp-phpmailer where the release takes PHPMailer from it)
# unpacked into the same tree, so that those links (wp-includes/ID3/*,
# wp-includes/PHPMailer/* -> ../../../php/...) resolve inside DEST.
#   php-tests/harness/unpack-wordpress.sh DEST
set -euo pipefail
dest=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"   # apt's _apt user downloads into it
cd "$work"
apt-get download -qq wordpress 2>/dev/null || { apt-get update -qq && apt-get download -qq wordpress; }
libs=$(dpkg-deb -f wordpress_*.deb Depends | tr ',|' '\n\n' | sed 's/^ *//; s/[ (].*//' | grep -E '^(php-getid3|libphp-phpmailer)$' || true)
# shellcheck disable=SC2086 # a list of package names
[ -z "$libs" ] || apt-get download -qq $libs
rm -rf "$dest.tmp"
mkdir -p "$(dirname "$dest")"
for deb in ./*.deb; do dpkg-deb -x "$deb" "$dest.tmp"; done
rm -rf "$dest" && mv "$dest.tmp" "$dest"
