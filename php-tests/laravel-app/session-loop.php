<?php
// `php cli.php session-loop N`: one long-running process (as Octane or a queue worker
// runs) sends N requests through one HTTP kernel, handle() then terminate(), over three
// sessions in turn. Between requests it looks into the backend for each session's lock
// key (raw, without the handler's help), and in the end prints the three counters.
// Included by cli.php ($run, show()).

use Illuminate\Http\Request;

$app = boot();
$kernel = $app->make(Illuminate\Contracts\Http\Kernel::class);
$raw = new Ephpm\Kv(config('session.ephpm.dsn'));
$prefix = config('session.ephpm.prefix');
$ids = [];
foreach (['a', 'b', 'c'] as $letter) {
    $ids[] = substr($letter . $run . str_repeat('0', 40), 0, 40);
}
$held = 0;
$n = (int) $argv[2];
for ($i = 0; $i < $n; $i++) {
    $id = $ids[$i % 3];
    $request = Request::create('/session/incr', 'GET', [], ['laravel_session' => $id]);
    $response = $kernel->handle($request);
    $kernel->terminate($request, $response);
    // As Octane does between requests: the next request starts from an empty session.
    $app['session']->driver()->flush();
    foreach ($ids as $each) {
        if ($raw->has("{$prefix}session_lock:$each") || $raw->has("session_lock:$each")) {
            $held++;
        }
    }
}
show('requests after which a session lock key existed', $held);
$counts = [];
foreach ($ids as $id) {
    $app['session']->driver()->flush();
    $app['session']->driver()->setId($id);
    $app['session']->driver()->start();
    $counts[] = $app['session']->driver()->get('n', 0);
    $app['session']->driver()->save();
}
show('the three counters', $counts);
