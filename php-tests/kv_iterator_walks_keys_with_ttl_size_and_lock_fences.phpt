--TEST--
Ephpm\KvIterator walks a Kv's keys (without its prefix, only those under the prefix asked for) with their TTL, stored size and, for held locks, their fence; across batches (600 keys); rewind starts again; an empty store yields nothing. On cluster:// it shows this host's live copies, without fences.
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_kv_iterator
ephpm.shm_size=8M
--FILE--
<?php
$kv = new Ephpm\Kv(null, 'it:');
$kv->clear();
$cluster = str_starts_with($kv->stats()['backend'], 'cluster');
for ($i = 0; $i < 600; $i++) {
    $kv->set("k:$i", str_repeat('x', $i % 7), $i % 2 ? 60 : 0);
}
$kv->set('other', 'y');
$locks = new Ephpm\MemoLock($kv);
$held = $locks->acquire('job', 30_000);
(new Ephpm\Kv(null, 'not-it:'))->set('k:1', 'outside');

$seen = [];
foreach (new Ephpm\KvIterator($kv, 'k:') as $key => $info) {
    $seen[$key] = $info;
}
$all = array_map(fn ($i) => "k:$i", range(0, 599));
// This host may hold only some of a cluster's keys: those it has must be right.
echo 'keys seen: ', ($cluster ? !array_diff(array_keys($seen), $all) && count($seen) > 0 : count($seen) === 600 && !array_diff($all, array_keys($seen))) ? 'right' : 'wrong', "\n";
$ok = true;
foreach ($seen as $key => $info) {
    $i = (int) substr($key, 2);
    $ok = $ok && ($i % 2 ? $info['ttl'] > 50 && $info['ttl'] <= 60 : $info['ttl'] === null) && $info['fence'] === null;
}
echo 'ttl and fence of every value: ', $ok ? 'right' : 'wrong', "\n";
// The stored size: the value's bytes, plus what the backend keeps with it (a type tag
// on Redis, the cluster's envelope).
$size = $seen['k:6']['size'] ?? null;
echo 'size of a 6-byte value: ', ($cluster && $size === null) || ($size >= 6 && $size <= ($cluster ? 64 : 8)) ? 'right' : var_export($size, true), "\n";

$job = iterator_to_array(new Ephpm\KvIterator($kv, 'job'));
echo 'the held lock: ', $cluster ? ($job === [] || $job['job']['fence'] === null ? 'right' : 'wrong') : (count($job) === 1 && $job['job']['fence'] === $held->fence && $job['job']['ttl'] > 25 ? 'right' : var_export($job, true)), "\n";

$it = new Ephpm\KvIterator($kv, 'other');
echo count(iterator_to_array($it)) <= 1 && iterator_to_array($it) === iterator_to_array($it) ? "rewind walks again\n" : "rewind broken\n";
var_dump(iterator_to_array(new Ephpm\KvIterator(new Ephpm\Kv(null, 'empty:'))));
$held->release();
$kv->clear();
(new Ephpm\Kv(null, 'not-it:'))->clear();
--EXPECT--
keys seen: right
ttl and fence of every value: right
size of a 6-byte value: right
the held lock: right
rewind walks again
array(0) {
}
