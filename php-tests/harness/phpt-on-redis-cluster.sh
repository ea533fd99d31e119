#!/usr/bin/env bash
# Runs the backend-generic .phpt tests again with ephpm.dsn on a Redis Cluster (three
# masters with a replica each, on loopback ports; stopped by pid), each test with its own
# key prefix, and prints one line: "phpt-redis-cluster: N passed, N failed, N skipped".
#   php-tests/harness/phpt-on-redis-cluster.sh path/to/ephpm.so
set -u
so=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
dir=$(mktemp -d)
trap 'stop_redis_cluster "$dir"; sleep 0.2; rm -rf "$dir"' EXIT
start_redis_cluster "$dir"
run_generic_phpts "$so" phpt-redis-cluster "redis-cluster://$redis_cluster_seeds?"
