<?php

namespace Ephpm\Symfony\Bundle\DependencyInjection;

use Ephpm\Kv;
use Ephpm\Symfony\Bundle\EnvDsnProcessor;
use Ephpm\Symfony\Bundle\EphpmDsn;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\Exception\InvalidArgumentException;

/**
 * Turns what a user may write where ephpm wants a store — a name of `ephpm.stores`,
 * `ephpm://` or `ephpm://NAME` (EphpmDsn), a DSN (shm://, redis://…), an env var holding
 * any of these, the id of an `Ephpm\Kv` service, or nothing — into the DSN given to
 * `new Ephpm\Kv()` (null: the `ephpm.dsn` ini setting). The stores map is the container
 * parameter `ephpm.stores`.
 */
final class Stores
{
    public const PARAMETER = 'ephpm.stores';

    /**
     * @param string $where What names the store, for the error message ('pool "cache.app"').
     *
     * @return string|null The DSN; for an env var, the placeholder of the same var
     *                     through EnvDsnProcessor (`ephpm://…` is resolved when it is read).
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
        if (null !== $env = self::env($container, $ref)) {
            return $env;
        }
        if (EphpmDsn::is($ref)) {
            if (!\array_key_exists($name = EphpmDsn::name($ref), $stores)) {
                throw new InvalidArgumentException(sprintf('ephpm: %s names the store "%s", which is not a store of ephpm.stores (%s).', $where, $name, implode(', ', array_keys($stores))));
            }

            return EphpmDsn::resolve($ref, $stores);
        }
        if (str_contains($ref, '://')) {
            return $ref;
        }
        if ($container->has($ref)) {
            return self::service($container, $ref, $where);
        }
        throw new InvalidArgumentException(sprintf('ephpm: %s names the store "%s", which is neither a store of ephpm.stores (%s), an ephpm DSN (ephpm://, ephpm://NAME, shm://NAME, redis://…, rediss://…, unix:///…, cluster://) nor an Ephpm\Kv service.', $where, $ref, implode(', ', array_keys($stores))));
    }

    /**
     * For a reference that is one env var and nothing else, the placeholder of that var
     * through EnvDsnProcessor; null for anything else (a DSN that only contains an env
     * var, such as redis://%env(HOST)%, is a DSN).
     */
    private static function env(ContainerBuilder $container, string $ref): ?string
    {
        $container->resolveEnvPlaceholders($ref, null, $used);
        if (1 !== \count($used ?? []) || $container->resolveEnvPlaceholders($ref, '%%env(%s)%%') !== '%env(' . ($name = key($used)) . ')%') {
            return $used ? $ref : null;
        }

        return $container->getParameterBag()->get(sprintf('env(%s:%s)', EnvDsnProcessor::PREFIX, $name));
    }

    /**
     * A provider that is a service id, as Symfony lets a Redis pool name its connection
     * service: the DSN of that `Ephpm\Kv` service (`ephpm.store.NAME`, or one of the app's).
     */
    private static function service(ContainerBuilder $container, string $id, string $where): ?string
    {
        $definition = $container->findDefinition($id);
        $arguments = $definition->getArguments();
        if (Kv::class !== ltrim((string) $container->getParameterBag()->resolveValue($definition->getClass()), '\\') || $definition->getFactory()) {
            throw new InvalidArgumentException(sprintf('ephpm: %s is the service "%s", which is not an Ephpm\Kv built with new (its store is read from its arguments).', $where, $id));
        }
        if ('' !== (string) ($arguments[1] ?? $arguments['$prefix'] ?? '')) {
            throw new InvalidArgumentException(sprintf('ephpm: %s is the service "%s", an Ephpm\Kv with a prefix: a pool puts its own namespace before its keys; give it a Kv without one.', $where, $id));
        }

        $dsn = $arguments[0] ?? $arguments['$dsn'] ?? null;
        // A store of ephpm.stores (ephpm.store.NAME) has that store's DSN as it is: an env
        // var there was checked as a store DSN, and its placeholder is not always still
        // tracked once another config overrode the same var.
        if (\in_array($dsn, $container->getParameter(self::PARAMETER), true)) {
            return $dsn;
        }

        return self::dsn($container, $dsn, $where);
    }
}
