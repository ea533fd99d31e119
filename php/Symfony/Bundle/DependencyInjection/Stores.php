<?php

namespace Ephpm\Symfony\Bundle\DependencyInjection;

use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\Exception\InvalidArgumentException;

/**
 * Turns what a user may write where ephpm wants a store — a name of `ephpm.stores`, a DSN,
 * an env placeholder, or nothing — into the DSN given to `new Ephpm\Kv()` (null: the
 * `ephpm.dsn` ini setting). The stores map is the container parameter `ephpm.stores`.
 */
final class Stores
{
    public const PARAMETER = 'ephpm.stores';

    /**
     * @param string $where What names the store, for the error message ('pool "cache.app"').
     */
    public static function dsn(ContainerBuilder $container, ?string $ref, string $where): ?string
    {
        $stores = $container->getParameter(self::PARAMETER);
        if (null === $ref || '' === $ref) {
            return $stores['default'];
        }
        if (\array_key_exists($ref, $stores)) {
            return $stores[$ref];
        }
        $container->resolveEnvPlaceholders($ref, null, $usedEnvs);
        if ($usedEnvs || str_contains($ref, '://')) {
            return $ref;
        }
        throw new InvalidArgumentException(sprintf('ephpm: %s names the store "%s", which is neither a store of ephpm.stores (%s) nor a DSN (shm://NAME, redis://…, rediss://…, unix:///…, cluster://).', $where, $ref, implode(', ', array_keys($stores))));
    }
}
