<?php

namespace Ephpm\Symfony\Bundle\DependencyInjection;

use Symfony\Component\Config\Definition\Builder\ArrayNodeDefinition;
use Symfony\Component\Config\Definition\Builder\TreeBuilder;
use Symfony\Component\Config\Definition\ConfigurationInterface;

/**
 * The `ephpm:` config tree. Every option is documented here with ->info(), so
 * `bin/console config:dump-reference ephpm` prints the whole reference.
 */
final class Configuration implements ConfigurationInterface
{
    public function getConfigTreeBuilder(): TreeBuilder
    {
        $tree = new TreeBuilder('ephpm');
        $root = $tree->getRootNode();
        $root
            ->children()
                ->arrayNode('stores')
                    ->info('Named ephpm stores, name: DSN (shm://, shm://NAME, redis://…, rediss://…, unix:///…, cluster://). Wherever Symfony takes a DSN (a pool\'s "provider", framework.lock, framework.session.handler_id, lock.store, session.store) ephpm://NAME is the store NAME and ephpm:// the default one, literally or from an env var. "default" is the ephpm.dsn ini setting unless set here.')
                    ->example(['host' => 'shm://', 'fleet' => 'redis://10.0.0.5:6379'])
                    ->useAttributeAsKey('name')
                    ->normalizeKeys(false)
                    ->scalarPrototype()
                        ->validate()
                            // An %env()% DSN is validated as "" (Symfony's stand-in for a string env).
                            ->ifTrue(static fn ($dsn) => !\is_string($dsn) || ('' !== $dsn && !str_contains($dsn, '://')))
                            ->thenInvalid('%s is not an ephpm DSN (shm://, redis://, rediss://, unix://, cluster://).')
                        ->end()
                    ->end()
                ->end()
                ->booleanNode('stampede')
                    ->info('Give every pool whose adapter is cache.adapter.ephpm an Ephpm\MemoLock as its callback wrapper: a cold key is computed once across every process sharing the pool\'s store. false: no stampede protection at all on those pools (not even Symfony\'s per-host LockRegistry).')
                    ->defaultTrue()
                ->end()
                ->booleanNode('stampede_all_pools')
                    ->info('Also give every other pool of the app (filesystem, redis, …) a MemoLock, its locks on the default store.')
                    ->defaultFalse()
                ->end()
                ->integerNode('stampede_lock_ttl_ms')
                    ->info('How long a computation\'s lock lives, in milliseconds (a computation longer than this may run twice).')
                    ->min(1)->defaultValue(30000)
                ->end()
                ->integerNode('stampede_wait_ms')
                    ->info('How long a request waits for another one\'s computation before computing itself, in milliseconds.')
                    ->min(0)->defaultValue(5000)
                ->end()
                ->scalarNode('web_user')
                    ->info('The Unix user of the web server (php-fpm pool). ephpm\'s shm stores belong to one user: the ephpm:* commands warn when they run as another.')
                    ->defaultValue('www-data')
                ->end()
                ->append($this->lock())
                ->append($this->session())
            ->end();

        return $tree;
    }

    private function lock(): ArrayNodeDefinition
    {
        $node = (new TreeBuilder('lock'))->getRootNode();
        $node
            ->info('Make lock.factory (and LockFactory autowiring) a LockFactory on Ephpm\Symfony\Lock\EphpmStore.')
            ->canBeEnabled()
            ->beforeNormalization()
                ->ifString()->then(static fn (string $store) => ['enabled' => true, 'store' => $store])
            ->end()
            ->children()
                ->scalarNode('store')
                    ->info('A store name of ephpm.stores, ephpm://NAME, a DSN (shm://, redis://…), an env var holding one, or the id of an Ephpm\\Kv service; null: the default store.')
                    ->defaultNull()
                ->end()
                ->floatNode('initial_ttl')
                    ->info('Seconds a lock lives until it is refreshed (EphpmStore\'s initial TTL).')
                    ->min(0.001)->defaultValue(300.0)
                ->end()
            ->end();

        return $node;
    }

    private function session(): ArrayNodeDefinition
    {
        $node = (new TreeBuilder('session'))->getRootNode();
        $node
            ->info('Define ephpm.session.handler, an Ephpm\SessionHandler; use it with framework.session.handler_id: ephpm.session.handler. Unset options keep the ephpm.session.* ini settings.')
            ->canBeEnabled()
            ->children()
                ->scalarNode('store')
                    ->info('A store name of ephpm.stores, ephpm://NAME, a DSN (shm://, redis://…), an env var holding one, or the id of an Ephpm\\Kv service; null: the default store.')
                    ->defaultNull()
                ->end()
                ->scalarNode('prefix')
                    ->info('Put before every session key in the store.')
                    ->defaultValue('')
                ->end()
                ->booleanNode('locking')
                    ->info('Lock the session from read to write, so that concurrent requests on one session never lose an update.')
                    ->defaultNull()
                ->end()
                ->floatNode('lock_ttl')->info('Seconds a session lock lives (a request running longer loses it).')->min(0.001)->defaultNull()->end()
                ->floatNode('lock_wait')->info('Seconds a request waits for a session lock.')->min(0)->defaultNull()->end()
                ->enumNode('lock_timeout')
                    ->info('When the lock cannot be had within lock_wait: "warn" (an E_WARNING, the request goes on) or "fail" (the session cannot be read).')
                    ->values(['warn', 'fail', null])->defaultNull()
                ->end()
                ->integerNode('lifetime')->info('Seconds a session lives; null: session.gc_maxlifetime.')->min(1)->defaultNull()->end()
            ->end();

        return $node;
    }
}
