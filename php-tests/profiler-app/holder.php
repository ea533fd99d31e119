<?php
// Holds the symfony/lock lock "invoice-42" until /page asks for it, then 300 ms more,
// so that /page's blocking acquire waits.
use EphpmProfilerTest\ProfilerKernel;
use Ephpm\Kv;
use Ephpm\Symfony\Lock\EphpmStore;
use Symfony\Component\Lock\LockFactory;

require __DIR__ . '/autoload.php';

$signals = new Kv(null, 'profiler-test:');
$lock = (new LockFactory(new EphpmStore()))->createLock('invoice-42', 30);
$lock->acquire(true);
$signals->set('holder-has-lock', 1);
ProfilerKernel::await($signals, 'page-wants-lock');
usleep(300_000);
$lock->release();
