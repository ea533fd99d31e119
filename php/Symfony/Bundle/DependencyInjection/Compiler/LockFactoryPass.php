<?php

namespace Ephpm\Symfony\Bundle\DependencyInjection\Compiler;

use Symfony\Component\DependencyInjection\Alias;
use Symfony\Component\DependencyInjection\Compiler\CompilerPassInterface;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\Lock\LockFactory;

/**
 * With `ephpm.lock` enabled, lock.factory and LockFactory autowiring are ephpm's
 * (ephpm.lock.factory), whatever framework.lock says and whichever bundle loaded first.
 */
final class LockFactoryPass implements CompilerPassInterface
{
    public function process(ContainerBuilder $container): void
    {
        if ($container->hasDefinition('ephpm.lock.factory')) {
            $container->setAlias('lock.factory', new Alias('ephpm.lock.factory', false));
            $container->setAlias(LockFactory::class, new Alias('ephpm.lock.factory', false));
        }
    }
}
