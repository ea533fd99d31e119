--TEST--
EphpmBundle: one spelling, ephpm:// (the default store) or ephpm://NAME (a store of ephpm.stores), works wherever Symfony takes a DSN, literally or from %env()%: framework.lock, framework.session.handler_id and a pool's provider, on first use of a compiled container; a provider may be the id of an Ephpm\Kv service; an env var with another DSN still gets Symfony's own store/handler; an unknown store name is an error naming the stores
--EXTENSIONS--
ephpm
ctype
mbstring
tokenizer
--SKIPIF--
<?php if (!is_file('/usr/share/php/Symfony/Bundle/FrameworkBundle/autoload.php') || !is_file('/usr/share/php/Symfony/Component/Lock/autoload.php')) die('skip Debian\'s php-symfony-framework-bundle and php-symfony-lock are not installed');
--INI--
ephpm.store_name=phpt_symfony_dsn
ephpm.shm_size=4M
--FILE--
<?php
ob_start(); // Symfony's file session handler sets ini values: no headers may be sent before
require __DIR__ . '/symfony-app/src/autoload.php';

use Symfony\Bundle\FrameworkBundle\FrameworkBundle;
use Symfony\Bundle\FrameworkBundle\Kernel\MicroKernelTrait;
use Symfony\Component\DependencyInjection\ContainerInterface;
use Symfony\Component\HttpKernel\Kernel;

/** A kernel whose container is compiled from one YAML file and dumped, as an app's is. */
final class DsnKernel extends Kernel
{
    use MicroKernelTrait;

    public function __construct(private string $dir) { parent::__construct('test', false); }
    public function registerBundles(): iterable { return [new FrameworkBundle(), new Ephpm\Symfony\EphpmBundle()]; }
    public function getProjectDir(): string { return $this->dir; }
    public function getCacheDir(): string { return $this->dir . '/cache'; }
    public function getLogDir(): string { return $this->dir . '/log'; }
}

$dirs = [];
function container(string $yaml): ContainerInterface
{
    global $dirs;
    $dirs[] = $dir = sys_get_temp_dir() . '/ephpm-dsn-' . getmypid() . '-' . count($dirs);
    mkdir("$dir/config/packages", 0700, true);
    file_put_contents("$dir/config/packages/base.yaml", "framework: { secret: s, http_method_override: false }\nservices: { lf: { alias: lock.factory, public: true } }\n");
    file_put_contents("$dir/config/packages/test.yaml", $yaml);
    $kernel = new DsnKernel($dir);
    $kernel->boot();
    return $kernel->getContainer();
}
function store(object $factory): string
{
    return get_class((new ReflectionProperty($factory, 'store'))->getValue($factory));
}

$side = new Ephpm\Kv('shm://phpt_symfony_dsn_side');
$default = new Ephpm\Kv();
$side->clear();
$default->clear();
putenv('LOCK_DSN=ephpm://side');
putenv('SESSION_DSN=ephpm://side');
putenv('CACHE_DSN=ephpm://side');
$c = container(<<<'YAML'
ephpm: { stores: { side: 'shm://phpt_symfony_dsn_side' }, session: { prefix: 'sess:' } }
framework:
    lock: '%env(LOCK_DSN)%'
    session: { handler_id: '%env(SESSION_DSN)%', storage_factory_id: session.storage.factory.native }
    cache:
        pools:
            pool.env: { adapter: cache.adapter.ephpm, provider: '%env(CACHE_DSN)%', public: true }
            pool.literal: { adapter: cache.adapter.ephpm, provider: 'ephpm://side', public: true }
            pool.store_service: { adapter: cache.adapter.ephpm, provider: ephpm.store.side, public: true }
            pool.app_service: { adapter: cache.adapter.ephpm, provider: app.kv, public: true }
            pool.stale: { adapter: ephpm.stale_cache_adapter, provider: '%env(CACHE_DSN)%', public: true }
            pool.default: { adapter: cache.adapter.ephpm, provider: 'ephpm://', public: true }
services:
    app.kv: { class: Ephpm\Kv, arguments: ['shm://phpt_symfony_dsn_side'] }
    sh: { alias: session.handler, public: true }
YAML);
$lock = $c->get('lf')->createLock('orders', 30);
printf("framework.lock env(LOCK_DSN) = ephpm://side: %s, acquired %s, held in store side: %s\n",
    store($c->get('lf')), var_export($lock->acquire(), true), var_export(null !== $side->ttl('orders'), true));
$lock->release();
$handler = $c->get('sh');
$handler->open('', 'PHPSESSID');
$id = $handler->create_sid();
$handler->read($id);
$handler->write($id, 'n|i:1;');
$handler->close();
$reader = new Ephpm\SessionHandler(new Ephpm\Kv('shm://phpt_symfony_dsn_side', 'sess:'), ['locking' => false]);
$reader->open('', 'PHPSESSID');
printf("session.handler_id env(SESSION_DSN) = ephpm://side: %s, the session in store side under sess:: %s\n",
    get_class($handler), var_export('n|i:1;' === $reader->read($id), true));
foreach (['pool.env', 'pool.literal', 'pool.store_service', 'pool.app_service', 'pool.stale', 'pool.default'] as $pool) {
    [$before, $beforeDefault] = [$side->stats()['entries'], $default->stats()['entries']];
    $value = $c->get($pool)->get('item', fn () => "made by $pool");
    printf("%s: %s, stored in store %s\n", $pool, $value, $side->stats()['entries'] > $before ? 'side' : ($default->stats()['entries'] > $beforeDefault ? 'default' : 'none'));
}

putenv('LOCK_DSN=flock');
putenv('SESSION_DSN=file://' . sys_get_temp_dir());
$c = container("framework:\n    lock: '%env(LOCK_DSN)%'\n    session: { handler_id: '%env(SESSION_DSN)%', storage_factory_id: session.storage.factory.native }\nservices: { sh: { alias: session.handler, public: true } }\n");
printf("another DSN from the same env vars gets Symfony's own: %s, %s\n", store($c->get('lf')), get_class($c->get('sh')));

putenv('LOCK_DSN=ephpm://nowhere');
$c = container("ephpm: { stores: { side: 'shm://phpt_symfony_dsn_side' } }\nframework: { lock: '%env(LOCK_DSN)%' }\n");
try {
    $c->get('lf');
} catch (InvalidArgumentException $e) {
    echo get_class($e), ': ', $e->getMessage(), "\n";
}
foreach ([
    "framework: { cache: { pools: { p: { adapter: cache.adapter.ephpm, provider: lf } } } }",
    "framework: { cache: { pools: { p: { adapter: cache.adapter.ephpm, provider: app.kv } } } }\nservices: { app.kv: { class: Ephpm\Kv, arguments: [null, 'x:'] } }",
] as $yaml) {
    try {
        container($yaml);
    } catch (Exception $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
}
$side->clear();
$default->clear();
foreach ($dirs as $dir) {
    exec('rm -rf ' . escapeshellarg($dir));
}
ob_end_flush();
--EXPECTF--
framework.lock env(LOCK_DSN) = ephpm://side: Ephpm\Symfony\Lock\EphpmStore, acquired true, held in store side: true
session.handler_id env(SESSION_DSN) = ephpm://side: Ephpm\SessionHandler, the session in store side under sess:: true
pool.env: made by pool.env, stored in store side
pool.literal: made by pool.literal, stored in store side
pool.store_service: made by pool.store_service, stored in store side
pool.app_service: made by pool.app_service, stored in store side
pool.stale: made by pool.stale, stored in store side
pool.default: made by pool.default, stored in store default
another DSN from the same env vars gets Symfony's own: Symfony\Component\Lock\Store\FlockStore, Symfony\Component\HttpFoundation\Session\Storage\Handler\StrictSessionHandler
InvalidArgumentException: The DSN "ephpm://nowhere" names the ephpm store "nowhere", which is not a store of ephpm.stores (side, default).
Symfony\Component\DependencyInjection\Exception\InvalidArgumentException: ephpm: the provider of cache pool "p" is the service "lf", which is not an Ephpm\Kv built with new (its store is read from its arguments).
Symfony\Component\DependencyInjection\Exception\InvalidArgumentException: ephpm: the provider of cache pool "p" is the service "app.kv", an Ephpm\Kv with a prefix: a pool puts its own namespace before its keys; give it a Kv without one.
