<?php

namespace Ephpm\Symfony\Bundle\DependencyInjection\Compiler;

use Ephpm\Symfony\Bundle\DependencyInjection\EphpmExtension;
use Ephpm\Symfony\Bundle\DependencyInjection\Stores;
use Ephpm\Symfony\Bundle\EphpmDsn;
use Ephpm\Symfony\Bundle\FrameworkDsnFactory;
use Symfony\Component\DependencyInjection\Compiler\CompilerPassInterface;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\Definition;
use Symfony\Component\HttpFoundation\Session\Storage\Handler\SessionHandlerFactory;
use Symfony\Component\Lock\Store\StoreFactory;

/**
 * `ephpm://` and `ephpm://STORE` (EphpmDsn) where FrameworkBundle takes a DSN:
 * `framework.lock` (each resource's store) and `framework.session.handler_id`.
 * FrameworkBundle hands those DSNs to Symfony's StoreFactory and SessionHandlerFactory,
 * which know no ephpm ("Unsupported Connection"). A literal `ephpm://…` gets an
 * EphpmStore, or an Ephpm\SessionHandler with the `ephpm.session` options, in its
 * place; an env var (`%env(LOCK_DSN)%`) gets FrameworkDsnFactory, which decides when the
 * value is read and hands any other DSN to Symfony's factory.
 */
final class FrameworkDsnPass implements CompilerPassInterface
{
    public function process(ContainerBuilder $container): void
    {
        foreach ($container->getDefinitions() as $id => $definition) {
            $factory = $definition->getFactory();
            $argument = $definition->getArguments()[0] ?? null;
            $lock = [StoreFactory::class, 'createStore'] === $factory;
            if (!\is_string($argument) || (!$lock && [SessionHandlerFactory::class, 'createHandler'] !== $factory)) {
                continue;
            }
            $container->resolveEnvPlaceholders($argument, null, $usedEnvs);
            if (!$usedEnvs && !EphpmDsn::is($argument)) {
                continue;
            }
            $store = Stores::dsn($container, $argument, sprintf('"%s" (service "%s")', $container->resolveEnvPlaceholders($argument, '%%env(%s)%%'), $id));
            if ($usedEnvs) {
                $container->setDefinition($id, (new Definition($definition->getClass()))
                    ->setFactory([FrameworkDsnFactory::class, $lock ? 'lockStore' : 'sessionHandler'])
                    ->setArguments([$argument, $store, $container->getParameter($lock ? 'ephpm.lock.initial_ttl' : 'ephpm.session')]));
            } elseif ($lock) {
                $container->setDefinition($id, EphpmExtension::lockStore($store, $container->getParameter('ephpm.lock.initial_ttl')));
            } else {
                $container->setDefinition($id, EphpmExtension::sessionHandler($store, $container->getParameter('ephpm.session')));
            }
        }
    }
}
