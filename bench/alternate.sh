#!/usr/bin/env bash
# Builds of ephpm.so against each other on a noisy machine: bench/kv_vs_apcu.php runs
# with each build in turn, ROUNDS times round, so that a slow minute weighs on every build
# alike; each row's ratio to APCu (measured in the same process) is kept per round, and
# the table shows every build's median ratio per op (and ephpm's own cost of a get among
# 200,000 keys over a get of one key).
#   bash bench/alternate.sh ROUNDS REPS N a.so b.so ...
# (REPS and N are kv_vs_apcu.php's reps and iterations; a build is named by its file.)
set -eu
rounds=$1 reps=$2 n=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
for r in $(seq "$rounds"); do
    for so in "$@"; do
        name=$(basename "$so" .so)
        php -n -d extension=apcu -d apc.enable_cli=1 -d apc.shm_size=256M -d ephpm.shm_size=256M \
            -d "ephpm.store_name=alt_$name" -d "extension=$(realpath "$so")" \
            "$here/kv_vs_apcu.php" "$reps" "$n" |
            awk -F'|' -v b="$name" '
                NF > 6 && $5 ~ /[0-9]/ { gsub(/^ +| +$/, "", $2); gsub(/ /, "", $5); print b "\t" $2 "\t" $5 }
                /^get with 200,000 keys .* one key: ephpm/ {
                    order = $0; sub(/^get with 200,000 keys /, "", order); sub(/ \/ get with.*/, "", order)
                    x = $0; sub(/.*one key: ephpm /, "", x); sub(/×.*/, "", x)
                    print b "\tephpm alone: get among 200,000 keys " order " ÷ get of one key\t" x }' \
            >>"$out/rows"
        rm -f "/dev/shm/ephpm-$(id -u)/alt_$name"
    done
done
# One line per op: its median ratio under each build, in the order given.
python3 - "$out/rows" "$@" <<'PY'
import statistics, sys, os
rows, builds = sys.argv[1], [os.path.basename(b)[:-3] for b in sys.argv[2:]]
seen, ops = {}, []
for line in open(rows):
    b, op, ratio = line.rstrip("\n").split("\t")
    if op not in ops:
        ops.append(op)
    seen.setdefault((b, op), []).append(float(ratio))
print("| op (ephpm / APCu, median of rounds) | " + " | ".join(builds) + " |")
print("|---|" + "---|" * len(builds))
for op in ops:
    cells = [f"{statistics.median(seen[(b, op)]):.2f}" if (b, op) in seen else "" for b in builds]
    print(f"| {op} | " + " | ".join(cells) + " |")
PY
