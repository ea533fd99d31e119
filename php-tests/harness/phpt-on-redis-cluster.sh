#!/usr/bin/env bash
# Runs the backend-generic .phpt tests again with ephpm.dsn on a Redis Cluster (three
# masters with a replica each, on loopback ports; stopped by pid), each test with its own
# key prefix, and prints one line: "phpt-redis-cluster: N passed, N failed, N skipped".
# With tls, the cluster speaks TLS only and asks for a client certificate (a CA made for
# the run), the DSN is rediss-cluster:// with ca, cert and key, and the line starts
# "phpt-redis-cluster-tls:".
#   php-tests/harness/phpt-on-redis-cluster.sh path/to/ephpm.so [tls]
set -u
so=$(realpath "$1")
mode=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
dir=$(mktemp -d)
trap 'stop_redis_cluster "$dir"; sleep 0.2; rm -rf "$dir"' EXIT
start_redis_cluster "$dir" "$mode"
if [ "$mode" = tls ]; then
    run_generic_phpts "$so" phpt-redis-cluster-tls "rediss-cluster://$redis_cluster_seeds?$redis_cluster_query"
else
    run_generic_phpts "$so" phpt-redis-cluster "redis-cluster://$redis_cluster_seeds?"
fi
