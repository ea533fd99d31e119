#!/usr/bin/env bash
# One system of php-tests/systems made (system.sh) and the extension built in it for its
# PHP, into target/systems/NAME/ephpm.so (its cargo target kept in target/systems/NAME/cargo
# between runs). What system-suites.sh and laravel-branches.sh run on.
#   php-tests/harness/system-build.sh NAME
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
name=$1
out="$root/target/systems/$name"
bash "$here/system.sh" make "$name" || { echo "FAIL - $name: the system could not be made"; exit 1; }
bash "$here/system.sh" run "$name" bash -c "cd '$root' && cargo build --release --lib --target-dir '$out/cargo' 2>&1 | tail -n 3 \
    && install -m 0644 '$out/cargo/release/libephpm.so' '$out/ephpm.so'" || { echo "FAIL - $name: the extension did not build"; exit 1; }
