#!/usr/bin/env bash
# Runs the backend-generic .phpt tests again on a 3-node gossip cluster (ephpm-node
# processes on 127.0.0.1-3, stopped by pid), each test through the next node in turn and
# with its own key prefix, and prints one line: "phpt-cluster: N passed, N failed, N skipped";
# then the lock tests with ?copies=async: "phpt-cluster-async: N passed, …".
#   php-tests/harness/phpt-on-cluster.sh path/to/ephpm.so
set -u
so=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
dir=$(mktemp -d)
name="phptc$$"
trap 'stop_cluster "$dir" "$name"; rm -rf "$dir"' EXIT
start_cluster "$dir" "$name" 3
run_generic_phpts "$so" phpt-cluster "cluster://$name-1?" "cluster://$name-2?" "cluster://$name-3?"
# The lock tests once more with ?copies=async (a lock's owner answers before its
# replicas have their copies), on the same cluster.
PHPTS_MATCHING='^(lock|memolock|session_lock|symfony_lock|symfony_read_write_locks)_' \
    run_generic_phpts "$so" phpt-cluster-async "cluster://$name-1?copies=async&" \
    "cluster://$name-2?copies=async&" "cluster://$name-3?copies=async&"
