<?php

namespace Ephpm\Symfony\Bundle\DependencyInjection\Compiler;

use Ephpm\Symfony\Bundle\DependencyInjection\EphpmExtension;
use Ephpm\Symfony\Bundle\DependencyInjection\Stores;
use Symfony\Component\DependencyInjection\Compiler\CompilerPassInterface;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\HttpFoundation\Session\Storage\Handler\SessionHandlerFactory;
use Symfony\Component\Lock\Store\StoreFactory;

/**
 * `ephpm://` and `ephpm://STORE` (a store of ephpm.stores) where FrameworkBundle takes a
 * DSN: `framework.lock` (each resource's store) and `framework.session.handler_id`.
 * FrameworkBundle hands those DSNs to Symfony's StoreFactory and SessionHandlerFactory,
 * which know no ephpm ("Unsupported Connection"); this pass puts an EphpmStore, or an
 * Ephpm\SessionHandler with the `ephpm.session` options, in their place.
 */
final class FrameworkDsnPass implements CompilerPassInterface
{
    private const SCHEME = 'ephpm://';

    public function process(ContainerBuilder $container): void
    {
        foreach ($container->getDefinitions() as $id => $definition) {
            $factory = $definition->getFactory();
            $argument = $definition->getArguments()[0] ?? null;
            if (!\is_array($factory) || !\is_string($argument) || !str_starts_with($argument, self::SCHEME)) {
                continue;
            }
            $store = substr($argument, \strlen(self::SCHEME)) ?: null;
            $dsn = fn () => Stores::dsn($container, $store, sprintf('"%s" (service "%s")', $argument, $id));
            if ([StoreFactory::class, 'createStore'] === $factory) {
                $container->setDefinition($id, EphpmExtension::lockStore($dsn(), $container->getParameter('ephpm.lock.initial_ttl')));
            } elseif ([SessionHandlerFactory::class, 'createHandler'] === $factory) {
                $container->setDefinition($id, EphpmExtension::sessionHandler($dsn(), $container->getParameter('ephpm.session')));
            }
        }
    }
}
