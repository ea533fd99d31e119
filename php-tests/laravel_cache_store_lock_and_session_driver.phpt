--TEST--
Laravel (Debian's illuminate, 8.83 to 13): EphpmServiceProvider registers the cache driver and the session driver; put/get/increment/forget work; four processes racing Cache::lock('x')->get() never run two at once; block() is woken by the release; a session round trip through Laravel's session Store
--EXTENSIONS--
ephpm
pcntl
ctype
--SKIPIF--
<?php foreach (['Cache', 'Session', 'Container', 'Config'] as $p) if (!is_file("/usr/share/php/Illuminate/$p/autoload.php")) die("skip php-illuminate-" . strtolower($p) . " is not installed");
--INI--
ephpm.store_name=phpt_laravel
ephpm.shm_size=4M
--FILE--
<?php
// Debian's components alone (no framework), or a release branch's checkout (EPHPM_LARAVEL_SRC).
if (getenv('EPHPM_LARAVEL_SRC')) require __DIR__ . '/harness/laravel-autoload.php';
else foreach (['Cache', 'Session', 'Container', 'Config'] as $p) require "/usr/share/php/Illuminate/$p/autoload.php";
require __DIR__ . '/../php/autoload.php';

use Illuminate\Cache\CacheManager;
use Illuminate\Config\Repository as Config;
use Illuminate\Container\Container;
use Illuminate\Session\SessionManager;

(new Ephpm\Kv())->clear();
$app = new Container();
$app['config'] = new Config([
    'cache' => ['default' => 'ephpm', 'prefix' => 'laravel_', 'stores' => ['ephpm' => ['driver' => 'ephpm', 'prefix' => 'app']]],
    'session' => ['driver' => 'ephpm', 'lifetime' => 120, 'cookie' => 'laravel_session'],
]);
$app->singleton('cache', fn ($app) => new CacheManager($app));
$app->singleton('session', fn ($app) => new SessionManager($app));
(new Ephpm\Laravel\EphpmServiceProvider($app))->boot();

$cache = $app['cache']->store();
echo get_class($cache->getStore()), "\n";
var_dump($cache->put('answer', ['n' => 42], 60), $cache->get('answer'), $cache->get('missing', 'default'));
var_dump($cache->increment('hits'), $cache->increment('hits', 5), $cache->decrement('hits'));
var_dump($cache->forget('answer'), $cache->has('answer'));
var_dump($cache->many(['hits', 'nothing']));
var_dump((new Ephpm\Kv())->get('cache:app:hits'));

echo "-- four processes racing Cache::lock('x')->get(...)\n";
$kv = new Ephpm\Kv(null, 'race:');
$kids = [];
$start = hrtime(true) + 200_000_000;
for ($p = 0; $p < 4; $p++) {
    if (($pid = pcntl_fork()) === 0) {
        $cache = $app['cache']->store();
        for ($i = 0; $i < 100; $i++) {
            while (hrtime(true) < $start) { }
            $cache->lock('x', 10)->get(function () use ($kv) {
                if ($kv->increment('inside') > 1) { $kv->set('overlap', true); }
                usleep(2000);
                $kv->increment('inside', -1);
                $kv->increment('ran');
            });
        }
        exit(0);
    }
    $kids[] = $pid;
}
foreach ($kids as $pid) pcntl_waitpid($pid, $status);
printf("ran %s times in all, two at once: %s\n", $kv->get('ran') > 0 ? 'some' : 'no', var_export($kv->has('overlap'), true));

echo "-- block() is woken by the release\n";
$lock = $cache->lock('y', 10);
var_dump($lock->get());
if (($pid = pcntl_fork()) === 0) {
    usleep(100_000);
    $lock->release();
    exit(0);
}
$other = $cache->lock('y', 10);
var_dump($other->block(5, fn () => 'got it after the release'));
pcntl_waitpid($pid, $status);
var_dump($cache->restoreLock('y', 'someone else')->release());
try {
    $held = $cache->lock('z', 10); $held->get();
    $cache->lock('z', 10)->block(0.2);
} catch (Illuminate\Contracts\Cache\LockTimeoutException $e) {
    echo get_class($e), "\n";
}

echo "-- the session driver\n";
$session = $app['session']->driver();
echo get_class($session->getHandler()), "\n";
$session->setId(str_repeat('a', 40));
$session->start();
$session->put('user', 'ada');
$session->save();
$fresh = new Illuminate\Session\Store('laravel_session', new Ephpm\SessionHandler(new Ephpm\Kv(null, 'laravel_session:'), ['lifetime' => 7200]), str_repeat('a', 40));
$fresh->start();
var_dump($fresh->get('user'));
(new Ephpm\Kv())->clear();
--EXPECT--
Ephpm\Laravel\EphpmStore
bool(true)
array(1) {
  ["n"]=>
  int(42)
}
string(7) "default"
int(1)
int(6)
int(5)
bool(true)
bool(false)
array(2) {
  ["hits"]=>
  int(5)
  ["nothing"]=>
  NULL
}
int(5)
-- four processes racing Cache::lock('x')->get(...)
ran some times in all, two at once: false
-- block() is woken by the release
bool(true)
string(24) "got it after the release"
bool(false)
Illuminate\Contracts\Cache\LockTimeoutException
-- the session driver
Ephpm\Laravel\EphpmSessionHandler
string(3) "ada"
