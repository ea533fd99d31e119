# Helpers shared by the shell suites: counting checks and the summary line.
passed=0; failed=0; skipped=0
check() { # check "what it shows" expected actual
    if [ "$2" = "$3" ]; then passed=$((passed + 1)); echo "ok - $1"
    else failed=$((failed + 1)); echo "FAIL - $1: expected [$2], got [$3]"; fi
}
skip() { skipped=$((skipped + 1)); echo "skip - $1"; }
summary() { echo "$1: $passed passed, $failed failed, $skipped skipped"; }
