--TEST--
php --ri ephpm (phpinfo) shows the live store — backend, memory, entries, shards, counters — and every ephpm.* setting, the cluster's secret only as set or not
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_info
ephpm.shm_size=2M
ephpm.cluster.secret=never-shown
--FILE--
<?php
$kv = new Ephpm\Kv();
$kv->clear();
$kv->set('a', 1);
$kv->get('a');
$kv->get('missing');
ob_start();
phpinfo(INFO_MODULES);
$info = ob_get_clean();
$start = strpos($info, "\nephpm\n");
$section = substr($info, $start, strpos($info, "\n\n", strpos($info, 'ephpm.store_name', $start)) - $start);
foreach (explode("\n", $section) as $line) {
    if (str_contains($line, '=>')) {
        echo preg_replace('~/dev/shm/ephpm-\d+/~', '/dev/shm/ephpm-UID/', $line), "\n";
    }
}
--EXPECTF--
ephpm support => enabled
version => %s
default store (ephpm.dsn) => shm://
backend => shm (/dev/shm/ephpm-UID/phpt_info, 2097152 bytes, 16 shards)
memory size => 2097152
memory used => %d
entries => 1
shards => 16
hits => 1
misses => 1
evictions => 0
evictions: anonymous (new session ids, empty sessions) => 0
evictions: cache entries => 0
evictions: sessions => 0
expirations => 0
repairs after a crash => 0
shards reset (too damaged to repair) => 0
release (ephpm deploy) => 0
release acted on by this process => none yet
Redis protocol (ephpm-resp) => not running
Directive => Local Value => Master Value
ephpm.cluster.allow_insecure_no_auth => 0 => 0
ephpm.cluster.data_addr => no value => no value
ephpm.cluster.enabled => 0 => 0
ephpm.cluster.gossip_addr => 127.0.0.1:7946 => 127.0.0.1:7946
ephpm.cluster.gossip_interval => 1000 => 1000
ephpm.cluster.node_id => no value => no value
ephpm.cluster.push_writes => 1 => 1
ephpm.cluster.replication_factor => 2 => 2
ephpm.cluster.secret => (set, not shown) => (set, not shown)
ephpm.cluster.secret_file => no value => no value
ephpm.cluster.seeds => no value => no value
ephpm.cluster.small_key_threshold => 512 => 512
ephpm.compress_threshold => 64K => 64K
ephpm.deploys => 0 => 0
ephpm.dsn => shm:// => shm://
ephpm.session.lock_timeout => warn => warn
ephpm.session.lock_ttl => 0 => 0
ephpm.session.lock_wait => 30 => 30
ephpm.session.locking => 1 => 1
ephpm.shm_dir => /dev/shm => /dev/shm
ephpm.shm_size => 2M => 2M
ephpm.store_name => phpt_info => phpt_info
