<?php

namespace Ephpm\Symfony\Bundle;

use Ephpm\Kv;
use Ephpm\SessionHandler;
use Ephpm\Symfony\Lock\EphpmStore;
use Symfony\Component\HttpFoundation\Session\Storage\Handler\SessionHandlerFactory;
use Symfony\Component\Lock\Store\StoreFactory;

/**
 * Stands in for Symfony's StoreFactory::createStore() and
 * SessionHandlerFactory::createHandler() where `framework.lock` or
 * `framework.session.handler_id` is an env var (`%env(LOCK_DSN)%`): the value is known
 * only when the container runs. An `ephpm://…` value gets ephpm's lock store or session
 * handler, any other value Symfony's own factory, as it would have without EphpmBundle.
 */
final class FrameworkDsnFactory
{
    /**
     * @param string      $dsn   The env value as written (`ephpm://host`, `flock`, `redis://…`).
     * @param string|null $store The same value through EnvDsnProcessor: the store's DSN.
     */
    public static function lockStore(string $dsn, ?string $store, float $initialTtl): object
    {
        return EphpmDsn::is($dsn) ? new EphpmStore(new Kv($store), $initialTtl) : StoreFactory::createStore($dsn);
    }

    /** @param array{prefix: string, options: array} $session The parameter `ephpm.session`. */
    public static function sessionHandler(string $dsn, ?string $store, array $session): \SessionHandlerInterface
    {
        return EphpmDsn::is($dsn)
            ? new SessionHandler(new Kv($store, $session['prefix']), $session['options'] ?: null)
            : SessionHandlerFactory::createHandler($dsn);
    }
}
