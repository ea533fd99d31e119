--TEST--
pcntl_fork() after the background runtime started (a wait on redis:// ran): the child builds its own runtime and subscriber, its wait is woken by the release, and its connections are its own
--EXTENSIONS--
ephpm
pcntl
--SKIPIF--
<?php exec('command -v redis-server redis-cli', $out, $rc); if ($rc) die('skip redis-server and redis-cli are not installed');
--FILE--
<?php
require __DIR__ . '/harness/redis.inc';
$redis = new TestRedis();
$memo = Ephpm\MemoLock::fromDsn($redis->dsn());
// Each process's subscriber keeps a mailbox channel of its own, where a release hands
// the lock to the first waiter in line: the parent's (from the warm-up wait), and the
// child's once it waits — on a subscriber of its own, not the parent's inherited one.
$mailboxes = function () use ($redis): int {
    // --csv quotes each (binary) channel name.
    $out = shell_exec('redis-cli --csv -s ' . escapeshellarg($redis->socket)
        . " pubsub channels '*ephpm:mailbox:*'");
    return substr_count((string) $out, 'ephpm:mailbox:');
};

// Start the runtime and the subscriber in the parent: a wait that runs out.
$mine = $memo->acquire('warm-up');
var_dump($memo->acquire('warm-up', null, 50));
$mine->release();

$held = $memo->acquire('job');
$flag = tempnam(sys_get_temp_dir(), 'ephpm');
if (($pid = pcntl_fork()) === 0) {
    file_put_contents($flag, 'waiting');
    $got = $memo->acquire('job', null, 20000);
    exit($got !== null && $got->fence > $held->fence ? 0 : 1);
}
while (file_get_contents($flag) !== 'waiting') { usleep(1000); }
// The child's wait is woken through its own subscriber: a second mailbox.
$deadline = microtime(true) + 10;
while ($mailboxes() < 2 && microtime(true) < $deadline) { usleep(5000); }
echo 'the child subscribed: ', var_export($mailboxes() === 2, true), "\n";
var_dump($held->release());
pcntl_waitpid($pid, $status);
echo 'the child got the lock after the release: ', var_export(pcntl_wexitstatus($status) === 0, true), "\n";
// The parent's own connections still work after the child used and closed its own.
var_dump($memo->exclusively('job', fn() => 'parent ran'));
unlink($flag);
--EXPECT--
NULL
the child subscribed: true
bool(true)
the child got the lock after the release: true
string(10) "parent ran"
