<?php

namespace Ephpm\Symfony\Bundle;

/**
 * The one ephpm spelling Symfony users write wherever Symfony takes a DSN — a pool's
 * `provider`, `framework.lock`, `framework.session.handler_id`, `ephpm.lock.store`,
 * `ephpm.session.store`, literally or through `%env()%`: `ephpm://` is the default store,
 * `ephpm://NAME` the store NAME of `ephpm.stores`. Used while the container is built (a
 * literal DSN) and when it runs (an env value, through EnvDsnProcessor and
 * FrameworkDsnFactory), so both read a DSN the same way.
 */
final class EphpmDsn
{
    public const SCHEME = 'ephpm://';

    public static function is(string $dsn): bool
    {
        return str_starts_with(strtolower($dsn), self::SCHEME);
    }

    /**
     * The DSN of the store `ephpm://NAME` names, for `new Ephpm\Kv()` (null: the
     * `ephpm.dsn` ini setting); any other DSN is returned as it is.
     *
     * @param array<string, ?string> $stores `ephpm.stores`, name => DSN ("default" included).
     *
     * @throws \InvalidArgumentException when NAME is not a store of `ephpm.stores`.
     */
    public static function resolve(string $dsn, array $stores): ?string
    {
        if (!self::is($dsn)) {
            return $dsn;
        }
        $name = self::name($dsn);
        if (!\array_key_exists($name, $stores)) {
            throw new \InvalidArgumentException(sprintf('The DSN "%s" names the ephpm store "%s", which is not a store of ephpm.stores (%s).', $dsn, $name, implode(', ', array_keys($stores))));
        }

        return $stores[$name] ?? null;
    }

    /** The store name of an `ephpm://` DSN ("default" for `ephpm://` alone). */
    public static function name(string $dsn): string
    {
        return rawurldecode(substr($dsn, \strlen(self::SCHEME))) ?: 'default';
    }
}
