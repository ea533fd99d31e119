<?php

namespace Ephpm\Symfony\Bundle\DependencyInjection;

use Ephpm\Kv;
use Ephpm\SessionHandler;
use Ephpm\Symfony\Bundle\EnvDsnProcessor;
use Ephpm\Symfony\Command\ClearCommand;
use Ephpm\Symfony\Command\LocksCommand;
use Ephpm\Symfony\Command\StatsCommand;
use Ephpm\Symfony\EphpmAdapter;
use Ephpm\Symfony\Lock\EphpmStore;
use Ephpm\Symfony\StaleCacheAdapter;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\ContainerInterface;
use Symfony\Component\DependencyInjection\Definition;
use Symfony\Component\DependencyInjection\Extension\Extension;
use Symfony\Component\DependencyInjection\Reference;
use Symfony\Component\Lock\LockFactory;

/**
 * Maps the `ephpm:` config to service definitions, and nothing else: what needs to see
 * every pool (providers, callback wrappers, the lock.factory alias) is done by the
 * compiler passes EphpmBundle::build() adds, once every bundle has registered its pools.
 */
final class EphpmExtension extends Extension
{
    /** The tags other passes (the profiler's) find ephpm's services by. */
    public const POOL_TAG = 'ephpm.pool';
    public const MEMO_LOCK_TAG = 'ephpm.memo_lock';
    public const LOCK_STORE_TAG = 'ephpm.lock_store';

    public function getAlias(): string
    {
        return 'ephpm';
    }

    public function load(array $configs, ContainerBuilder $container): void
    {
        $config = $this->processConfiguration(new Configuration(), $configs);

        $container->setParameter(Stores::PARAMETER, $config['stores'] + ['default' => null]);
        $container->setParameter('ephpm.stampede', $config['stampede']);
        $container->setParameter('ephpm.stampede_all_pools', $config['stampede_all_pools']);
        $container->setParameter('ephpm.stampede_lock_ttl_ms', $config['stampede_lock_ttl_ms']);
        $container->setParameter('ephpm.stampede_wait_ms', $config['stampede_wait_ms']);
        // For ephpm:// in framework.lock and framework.session.handler_id (FrameworkDsnPass, FrameworkDsnFactory).
        $container->setParameter('ephpm.lock.initial_ttl', $config['lock']['initial_ttl']);
        $container->setParameter('ephpm.session', [
            'prefix' => $config['session']['prefix'],
            'options' => array_filter(
                array_intersect_key($config['session'], array_flip(['locking', 'lock_ttl', 'lock_wait', 'lock_timeout', 'lifetime'])),
                static fn ($v) => null !== $v,
            ),
        ]);

        $this->registerStores($container);
        $this->registerCacheAdapters($container);
        if ($config['lock']['enabled']) {
            $this->registerLock($config['lock'], $container);
        }
        if ($config['session']['enabled']) {
            $this->registerSession($config['session'], $container);
        }
        $this->registerCommands($config['web_user'], $container);
    }

    /**
     * ephpm.store.NAME (an Ephpm\Kv), autowired as `Kv $NAME`; `Kv` alone is the default
     * store. And the env processor `ephpm_store:` (EnvDsnProcessor), through which
     * Stores::dsn() reads a store given as an env var.
     */
    private function registerStores(ContainerBuilder $container): void
    {
        $container->register('ephpm.env_dsn_processor', EnvDsnProcessor::class)
            ->setArguments(['%' . Stores::PARAMETER . '%'])
            ->addTag('container.env_var_processor');
        foreach ($container->getParameter(Stores::PARAMETER) as $name => $dsn) {
            $container->register($id = 'ephpm.store.' . $name, Kv::class)->setArguments([$dsn]);
            if (preg_match('/^[a-zA-Z_\x7f-\xff][a-zA-Z0-9_\x7f-\xff]*$/', (string) $name)) {
                $container->registerAliasForArgument($id, Kv::class, (string) $name);
            }
        }
        $container->setAlias(Kv::class, 'ephpm.store.default');
    }

    /**
     * cache.adapter.ephpm and ephpm.stale_cache_adapter, for framework.cache.pools.X.adapter.
     * CachePoolPass fills their first two arguments (namespace, default lifetime),
     * PoolProviderPass the third (the DSN) from the pool's `provider`.
     */
    private function registerCacheAdapters(ContainerBuilder $container): void
    {
        $container->register('cache.adapter.ephpm', EphpmAdapter::class)
            ->setAbstract(true)
            ->setArguments(['', 0, null])
            ->addMethodCall('setLogger', [new Reference('logger', ContainerInterface::IGNORE_ON_INVALID_REFERENCE)])
            ->addTag('cache.pool', ['clearer' => 'cache.default_clearer', 'reset' => 'reset'])
            ->addTag('monolog.logger', ['channel' => 'cache']);
        // StaleCacheAdapter's arguments: namespace, default lifetime, DSN, stale seconds,
        // stale-if-error seconds, its MemoLock (null: on the pool's store), logger.
        $container->register('ephpm.stale_cache_adapter', StaleCacheAdapter::class)
            ->setAbstract(true)
            ->setArguments(['', 300, null, 60, 0, null, new Reference('logger', ContainerInterface::IGNORE_ON_INVALID_REFERENCE)])
            ->addTag('cache.pool', ['clearer' => 'cache.default_clearer'])
            ->addTag('monolog.logger', ['channel' => 'cache']);
    }

    private function registerLock(array $config, ContainerBuilder $container): void
    {
        $dsn = Stores::dsn($container, $config['store'], 'ephpm.lock.store');
        $container->setDefinition('ephpm.lock.store', self::lockStore($dsn, $config['initial_ttl']));
        $container->register('ephpm.lock.factory', LockFactory::class)
            ->setArguments([new Reference('ephpm.lock.store')])
            ->addMethodCall('setLogger', [new Reference('logger', ContainerInterface::IGNORE_ON_INVALID_REFERENCE)])
            ->addTag('monolog.logger', ['channel' => 'lock']);
    }

    private function registerSession(array $config, ContainerBuilder $container): void
    {
        $dsn = Stores::dsn($container, $config['store'], 'ephpm.session.store');
        $container->setDefinition('ephpm.session.handler', self::sessionHandler($dsn, $container->getParameter('ephpm.session')));
    }

    /** An EphpmStore on the store $dsn (tagged ephpm.lock_store). */
    public static function lockStore(?string $dsn, float $initialTtl): Definition
    {
        return (new Definition(EphpmStore::class, [new Definition(Kv::class, [$dsn]), $initialTtl]))
            ->addTag(self::LOCK_STORE_TAG);
    }

    /**
     * An Ephpm\SessionHandler on the store $dsn.
     *
     * @param array{prefix: string, options: array} $session The parameter `ephpm.session`.
     */
    public static function sessionHandler(?string $dsn, array $session): Definition
    {
        return new Definition(SessionHandler::class, [new Definition(Kv::class, [$dsn, $session['prefix']]), $session['options'] ?: null]);
    }

    private function registerCommands(string $webUser, ContainerBuilder $container): void
    {
        $commands = ['stats' => StatsCommand::class, 'clear' => ClearCommand::class, 'locks' => LocksCommand::class];
        foreach ($commands as $name => $class) {
            $container->register('ephpm.command.' . $name, $class)
                ->setArguments(['%' . Stores::PARAMETER . '%', $webUser])
                ->addTag('console.command', ['command' => 'ephpm:' . $name]);
        }
        // ephpm:clear keeps the sessions unless asked: it must know where they are.
        $container->getDefinition('ephpm.command.clear')->addMethodCall('setSessionPrefix', [$container->getParameter('ephpm.session')['prefix']]);
    }
}
