--TEST--
EphpmBundle from YAML (ephpm:// DSNs in framework.lock and session.handler_id too; StaleCacheAdapter pools on their provider's store): a pool's provider (store name or ephpm DSN) becomes its store and never a Symfony connection; each ephpm pool (and with stampede_all_pools every pool, its TagAwareAdapter too) gets its own MemoLock whose locks are under memo:<namespace>:; stampede: false leaves no wrapper; lock.factory and LockFactory are ephpm's; ephpm.session.handler has the options; tags for the profiler; an unknown store is an error naming the stores
--EXTENSIONS--
ephpm
ctype
mbstring
tokenizer
--SKIPIF--
<?php if (!is_file('/usr/share/php/Symfony/Bundle/FrameworkBundle/autoload.php') || !is_file('/usr/share/php/Symfony/Component/Lock/autoload.php')) die('skip Debian\'s php-symfony-framework-bundle and php-symfony-lock are not installed');
--INI--
ephpm.store_name=phpt_symfony_bundle
ephpm.shm_size=4M
--FILE--
<?php
require __DIR__ . '/symfony-app/src/autoload.php';

use Symfony\Bundle\FrameworkBundle\FrameworkBundle;
use Symfony\Bundle\FrameworkBundle\Kernel\MicroKernelTrait;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\HttpKernel\Kernel;

/** A kernel whose container is compiled from one YAML file and kept as a builder (nothing removed) to be looked at. */
final class ConfigKernel extends Kernel
{
    use MicroKernelTrait;

    public function __construct(private string $dir) { parent::__construct('test', false); }
    public function registerBundles(): iterable { return [new FrameworkBundle(), new Ephpm\Symfony\EphpmBundle()]; }
    public function getProjectDir(): string { return $this->dir; }
    public function getCacheDir(): string { return $this->dir . '/cache'; }
    public function getLogDir(): string { return $this->dir . '/log'; }

    public function builder(): ContainerBuilder
    {
        $this->initializeBundles();
        $container = $this->buildContainer();
        $container->getCompilerPassConfig()->setRemovingPasses([]);
        $container->compile();
        return $container;
    }
}

function build(string $yaml): ContainerBuilder
{
    $dir = sys_get_temp_dir() . '/ephpm-bundle-' . getmypid() . '-' . mt_rand();
    mkdir("$dir/config/packages", 0700, true);
    file_put_contents("$dir/config/packages/base.yaml", "framework: { secret: s, http_method_override: false }\n");
    file_put_contents("$dir/config/packages/test.yaml", $yaml);
    try {
        return (new ConfigKernel($dir))->builder();
    } finally {
        exec('rm -rf ' . escapeshellarg($dir));
    }
}

/** The MemoLock a pool's setCallbackWrapper() gets: [its Kv's DSN, its Kv's prefix] or null (no wrapper). */
function wrapper(ContainerBuilder $c, string $pool): array|string|null
{
    $calls = array_values(array_filter($c->getDefinition($pool)->getMethodCalls(), fn ($call) => 'setCallbackWrapper' === $call[0]));
    if (!$calls) {
        return 'not set';
    }
    $ref = end($calls)[1][0];
    if (null === $ref) {
        return null;
    }
    $memo = $c->getDefinition((string) $ref);
    return $memo->getArgument(0)->getArguments();
}

$c = build(<<<'YAML'
ephpm:
    stores: { host: 'shm://', fleet: 'redis://10.0.0.5:6379?prefix=app' }
    lock: fleet
    session: { enabled: true, store: host, prefix: 'sess:', locking: true, lock_wait: 2.5, lock_timeout: fail }
framework:
    session: { handler_id: ephpm.session.handler, storage_factory_id: session.storage.factory.native }
    cache:
        app: cache.adapter.ephpm
        pools:
            pool.a: { adapter: cache.adapter.ephpm, provider: host, public: true }
            pool.b: { adapter: cache.adapter.ephpm, provider: 'shm://other', public: true }
            pool.fleet: { adapter: cache.adapter.ephpm, provider: fleet, public: true }
            pool.default: { public: true }
            pool.tagged: { adapter: cache.adapter.ephpm, tags: true, public: true }
            pool.files: { adapter: cache.adapter.filesystem, public: true }
            pool.stale: { adapter: ephpm.stale_cache_adapter, provider: 'shm://phpt_symfony_bundle_stale', default_lifetime: 60, public: true }
YAML);
$ns = fn (string $pool) => $c->getDefinition($pool)->getArgument(0);
foreach (['pool.a', 'pool.b', 'pool.fleet', 'pool.default', '.pool.tagged.inner'] as $pool) {
    $d = $c->getDefinition($pool);
    [$dsn, $prefix] = wrapper($c, $pool);
    printf("%s: %s, store %s, MemoLock on %s under the pool's namespace: %s, tag ephpm.pool %s\n", $pool, $d->getClass(),
        json_encode($d->getArgument(2)), json_encode($dsn), var_export($prefix === 'memo:' . $ns($pool) . ':', true),
        json_encode($d->getTag('ephpm.pool')));
}
echo "pool.a and pool.b lock under different prefixes: ", var_export(wrapper($c, 'pool.a')[1] !== wrapper($c, 'pool.b')[1], true), "\n";
$connections = array_filter($c->getDefinitions(), fn ($d, $id) => str_starts_with($id, '.cache_connection.'), ARRAY_FILTER_USE_BOTH);
// FrameworkBundle's own default providers (Symfony 7 adds valkey://localhost) are not ours.
$others = array_filter(array_map(fn ($d) => $d->getArgument(0), $connections), fn ($dsn) => !preg_match('~^(redis|valkey|memcached)://localhost$~', $dsn));
echo "Symfony connections besides FrameworkBundle's default providers: ", implode(', ', $others) ?: 'none', "\n";
echo "pool.tagged (TagAwareAdapter) has the inner pool's MemoLock: ", var_export(wrapper($c, 'pool.tagged') === wrapper($c, '.pool.tagged.inner'), true), "\n";
echo "pool.files (filesystem) keeps Symfony's wrapper: ", json_encode(wrapper($c, 'pool.files')), "\n";
echo "MemoLock services tagged ephpm.memo_lock: ", implode(', ', array_map(fn ($t) => $t[0]['pool'], $c->findTaggedServiceIds('ephpm.memo_lock'))), "\n";
$d = $c->getDefinition('pool.stale');
printf("pool.stale: %s, store %s, lifetime %d, stale seconds %d, tag ephpm.pool %s, callback wrapper %s\n", $d->getClass(), json_encode($d->getArgument(2)),
    $d->getArgument(1), $d->getArgument(3), json_encode($d->getTag('ephpm.pool')), json_encode(wrapper($c, 'pool.stale')));
(new Ephpm\Kv('shm://phpt_symfony_bundle_stale'))->clear();
$c->get('pool.stale')->get('k', fn () => 'made by pool.stale');
echo "... it stores in that store: ", (new Ephpm\Kv('shm://phpt_symfony_bundle_stale'))->stats()['entries'], " entry\n";
$store = $c->getDefinition('ephpm.lock.store');
printf("lock.factory -> %s, LockFactory -> %s, its store %s on %s, tagged ephpm.lock_store: %s\n", $c->getAlias('lock.factory'),
    $c->getAlias(Symfony\Component\Lock\LockFactory::class), $store->getClass(), json_encode($store->getArgument(0)->getArguments()),
    var_export($store->hasTag('ephpm.lock_store'), true));
$session = $c->getDefinition('ephpm.session.handler');
printf("session.handler -> %s: %s on %s with %s\n", $c->getAlias('session.handler'), $session->getClass(),
    json_encode($session->getArgument(0)->getArguments()), json_encode($session->getArgument(1)));

$c = build(<<<'YAML'
ephpm: { stampede: false, stampede_all_pools: true }
framework:
    cache:
        pools:
            pool.a: { adapter: cache.adapter.ephpm, public: true }
            pool.files: { adapter: cache.adapter.filesystem, public: true }
YAML);
echo "stampede: false: pool.a's wrapper ", json_encode(wrapper($c, 'pool.a')), "\n";
[$dsn, $prefix] = wrapper($c, 'pool.files');
echo "stampede_all_pools: pool.files has a MemoLock on the default store (", json_encode($dsn), ") under its namespace: ",
    var_export($prefix === 'memo:' . $c->getDefinition('pool.files')->getArgument(0) . ':', true), "\n";
echo "without ephpm.lock, lock.factory stays FrameworkBundle's: ", $c->getAlias('lock.factory'), "\n";

$c = build(<<<'YAML'
ephpm: { stores: { fleet: 'redis://10.0.0.5:6379' }, session: { prefix: 'sess:', lock_wait: 3 } }
framework:
    lock: { default: 'ephpm://', orders: 'ephpm://fleet' }
    session: { handler_id: 'ephpm://fleet', storage_factory_id: session.storage.factory.native }
YAML);
foreach (['lock.default.factory', 'lock.orders.factory'] as $factory) {
    $store = $c->getDefinition((string) $c->getDefinition($factory)->getArgument(0));
    printf("framework.lock DSN, %s: %s on %s, tagged ephpm.lock_store: %s\n", $factory, $store->getClass(),
        json_encode($store->getArgument(0)->getArguments()), var_export($store->hasTag('ephpm.lock_store'), true));
}
$session = $c->findDefinition('session.handler');
printf("framework.session.handler_id 'ephpm://fleet': %s on %s with %s\n", $session->getClass(),
    json_encode($session->getArgument(0)->getArguments()), json_encode($session->getArgument(1)));

$c = build("ephpm: { stores: { fleet: '%env(FLEET_DSN)%' } }\nframework: { cache: { pools: { p: { adapter: cache.adapter.ephpm, provider: fleet, public: true }, q: { adapter: cache.adapter.ephpm, provider: '%env(Q_DSN)%', public: true } } } }");
echo "env DSNs, as a store and as a provider, reach the pools (a provider through the ephpm_store: env processor, which reads ephpm://): ", json_encode([trim($c->resolveEnvPlaceholders($c->getDefinition('p')->getArgument(2)), '%'), trim($c->resolveEnvPlaceholders($c->getDefinition('q')->getArgument(2)), '%')]), "\n";

foreach ([
    "framework: { lock: 'ephpm://nowhere' }",
    "framework: { cache: { pools: { p: { adapter: cache.adapter.ephpm, provider: nowhere } } } }\nephpm: { stores: { host: 'shm://' } }",
    "ephpm: { stores: { bad: 'localhost' } }",
    "ephpm: { session: { lock_timeout: later } }",
] as $yaml) {
    try {
        build($yaml);
        echo "accepted\n";
    } catch (Exception $e) {
        echo get_class($e), ': ', rtrim($e->getMessage(), '.'), "\n"; // Symfony 7 ends it with a period
    }
}
--EXPECTF--
pool.a: Ephpm\Symfony\EphpmAdapter, store "shm:\/\/", MemoLock on "shm:\/\/" under the pool's namespace: true, tag ephpm.pool [{"pool":"pool.a"}]
pool.b: Ephpm\Symfony\EphpmAdapter, store "shm:\/\/other", MemoLock on "shm:\/\/other" under the pool's namespace: true, tag ephpm.pool [{"pool":"pool.b"}]
pool.fleet: Ephpm\Symfony\EphpmAdapter, store "redis:\/\/10.0.0.5:6379?prefix=app", MemoLock on "redis:\/\/10.0.0.5:6379?prefix=app" under the pool's namespace: true, tag ephpm.pool [{"pool":"pool.fleet"}]
pool.default: Ephpm\Symfony\EphpmAdapter, store null, MemoLock on null under the pool's namespace: true, tag ephpm.pool [{"pool":"pool.default"}]
.pool.tagged.inner: Ephpm\Symfony\EphpmAdapter, store null, MemoLock on null under the pool's namespace: true, tag ephpm.pool [{"pool":"pool.tagged"}]
pool.a and pool.b lock under different prefixes: true
Symfony connections besides FrameworkBundle's default providers: none
pool.tagged (TagAwareAdapter) has the inner pool's MemoLock: true
pool.files (filesystem) keeps Symfony's wrapper: "not set"
MemoLock services tagged ephpm.memo_lock: cache.app, pool.a, pool.b, pool.fleet, pool.default, pool.tagged
pool.stale: Ephpm\Symfony\StaleCacheAdapter, store "shm:\/\/phpt_symfony_bundle_stale", lifetime 60, stale seconds 60, tag ephpm.pool [{"pool":"pool.stale"}], callback wrapper "not set"
... it stores in that store: 1 entry
lock.factory -> ephpm.lock.factory, LockFactory -> ephpm.lock.factory, its store Ephpm\Symfony\Lock\EphpmStore on ["redis:\/\/10.0.0.5:6379?prefix=app"], tagged ephpm.lock_store: true
session.handler -> ephpm.session.handler: Ephpm\SessionHandler on ["shm:\/\/","sess:"] with {"locking":true,"lock_wait":2.5,"lock_timeout":"fail"}
stampede: false: pool.a's wrapper null
stampede_all_pools: pool.files has a MemoLock on the default store (null) under its namespace: true
without ephpm.lock, lock.factory stays FrameworkBundle's: lock.default.factory
framework.lock DSN, lock.default.factory: Ephpm\Symfony\Lock\EphpmStore on [null], tagged ephpm.lock_store: true
framework.lock DSN, lock.orders.factory: Ephpm\Symfony\Lock\EphpmStore on ["redis:\/\/10.0.0.5:6379"], tagged ephpm.lock_store: true
framework.session.handler_id 'ephpm://fleet': Ephpm\SessionHandler on ["redis:\/\/10.0.0.5:6379","sess:"] with {"lock_wait":3}
env DSNs, as a store and as a provider, reach the pools (a provider through the ephpm_store: env processor, which reads ephpm://): ["env(FLEET_DSN)","env(ephpm_store:Q_DSN)"]
Symfony\Component\DependencyInjection\Exception\InvalidArgumentException: ephpm: "ephpm://nowhere" (service ".lock.default.store.%s") names the store "nowhere", which is not a store of ephpm.stores (default)
Symfony\Component\DependencyInjection\Exception\InvalidArgumentException: ephpm: the provider of cache pool "p" names the store "nowhere", which is neither a store of ephpm.stores (host, default), an ephpm DSN (ephpm://, ephpm://NAME, shm://NAME, redis://…, rediss://…, unix:///…, cluster://) nor an Ephpm\Kv service
Symfony\Component\Config\Definition\Exception\InvalidConfigurationException: Invalid configuration for path "ephpm.stores.bad": "localhost" is not an ephpm DSN (shm://, redis://, rediss://, unix://, cluster://)
Symfony\Component\Config\Definition\Exception\InvalidConfigurationException: The value "later" is not allowed for path "ephpm.session.lock_timeout". Permissible values: "warn", "fail", null
