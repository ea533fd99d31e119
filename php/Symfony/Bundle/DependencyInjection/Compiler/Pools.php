<?php

namespace Ephpm\Symfony\Bundle\DependencyInjection\Compiler;

use Ephpm\Symfony\EphpmAdapter;
use Ephpm\Symfony\StaleCacheAdapter;
use Symfony\Component\DependencyInjection\ChildDefinition;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\Definition;

/**
 * The cache pools of a container as CachePoolPass sees them: a pool is a ChildDefinition
 * of an adapter (or of another pool), so its class, its `cache.pool` tag and its
 * arguments are the chain's, the nearest definition winning.
 */
final class Pools
{
    /** @return iterable<string, Definition> The concrete (not abstract) pools, by service id. */
    public static function all(ContainerBuilder $container): iterable
    {
        foreach ($container->findTaggedServiceIds('cache.pool') as $id => $tags) {
            $definition = $container->getDefinition($id);
            if (!$definition->isAbstract()) {
                yield $id => $definition;
            }
        }
    }

    /** @return list<Definition> The pool, then its parents up to the adapter. */
    public static function chain(ContainerBuilder $container, Definition $pool): array
    {
        $chain = [$pool];
        while ($pool instanceof ChildDefinition) {
            $chain[] = $pool = $container->findDefinition($pool->getParent());
        }

        return $chain;
    }

    public static function class(ContainerBuilder $container, Definition $pool): ?string
    {
        foreach (self::chain($container, $pool) as $definition) {
            if (null !== $class = $definition->getClass()) {
                return $container->getParameterBag()->resolveValue($class);
            }
        }

        return null;
    }

    /** Whether the pool is on an ephpm store: an EphpmAdapter or a StaleCacheAdapter. */
    public static function isEphpm(ContainerBuilder $container, Definition $pool): bool
    {
        return self::is($container, $pool, EphpmAdapter::class) || self::is($container, $pool, StaleCacheAdapter::class);
    }

    public static function is(ContainerBuilder $container, Definition $pool, string $class): bool
    {
        $poolClass = self::class($container, $pool);

        return null !== $poolClass && is_a($poolClass, $class, true);
    }

    /** The `cache.pool` tag's attributes, merged up the chain as CachePoolPass merges them. */
    public static function tag(ContainerBuilder $container, Definition $pool): array
    {
        $attributes = [];
        foreach (self::chain($container, $pool) as $definition) {
            $attributes += $definition->getTag('cache.pool')[0] ?? [];
        }

        return $attributes;
    }

    /** Argument $key (a position, or a name such as '$dsn'), looked up the chain; null when none sets it. */
    public static function argument(ContainerBuilder $container, Definition $pool, int|string $key): mixed
    {
        foreach (self::chain($container, $pool) as $definition) {
            $arguments = $definition->getArguments();
            foreach (\is_int($key) ? ['index_' . $key, $key] : [$key] as $k) {
                if (\array_key_exists($k, $arguments)) {
                    return $arguments[$k];
                }
            }
        }

        return null;
    }
}
