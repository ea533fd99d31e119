--TEST--
Kv::members() lists a cluster:// store's members as the host's node sees them (one array each, exactly one of them this node, alive and never "heard": it is the one answering), and is [] on a store that is no cluster (shm://, Redis)
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_members
ephpm.shm_size=4M
--FILE--
<?php
$kv = new Ephpm\Kv();
$members = $kv->members();
$cluster = str_starts_with($kv->stats()['backend'], 'cluster');
$fields = ['id', 'state', 'this_node', 'last_heard_ms', 'share', 'keys', 'copies_pending',
    'copies_dropped', 'clock_skew_ms', 'versions', 'version'];
$problems = [];
if (!$cluster && $members !== []) {
    $problems[] = 'members of a store that is no cluster';
}
if ($cluster) {
    $mine = array_values(array_filter($members, fn (array $m) => $m['this_node']));
    if (count($mine) !== 1 || $mine[0]['state'] !== 'alive' || $mine[0]['last_heard_ms'] !== null) {
        $problems[] = 'this node is not listed once, alive';
    }
    foreach ($members as $m) {
        if (array_keys($m) !== $fields) {
            $problems[] = 'fields: ' . implode(',', array_keys($m));
        }
        if (!in_array($m['state'], ['alive', 'suspect', 'dead'], true) || !is_float($m['share'])
            || !is_int($m['keys']) || !is_array($m['versions'])) {
            $problems[] = 'a member of the wrong shape: ' . json_encode($m);
        }
    }
}
echo $problems === [] ? "ok\n" : implode("\n", $problems) . "\n";
$ids = array_column($members, 'id');
$sorted = $ids;
sort($sorted);
var_dump($ids === $sorted);
?>
--EXPECT--
ok
bool(true)
