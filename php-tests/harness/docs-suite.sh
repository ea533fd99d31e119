#!/usr/bin/env bash
# The documents' links and runnable examples (docs-check.php says what is checked).
#   php-tests/harness/docs-suite.sh path/to/ephpm.so
set -u
here=$(cd "$(dirname "$0")" && pwd)
so=$(realpath "$1")
php -n "$here/docs-check.php" "$(cd "$here/../.." && pwd)" "$so"
