<?php

namespace Ephpm\Symfony\Bundle\DependencyInjection\Compiler;

use Ephpm\Symfony\Bundle\DependencyInjection\EphpmExtension;
use Symfony\Component\DependencyInjection\Compiler\CompilerPassInterface;
use Symfony\Component\DependencyInjection\ContainerBuilder;

/**
 * Tells the ephpm:clear and ephpm:locks commands the app's ephpm cache pools — name,
 * store, key prefix `<namespace>:` — so that they show keys by pool name rather than by
 * the hash namespace Symfony gives each pool, and ephpm:clear --pool can clear one.
 * Runs after Symfony's CachePoolPass (which decides the namespaces) and PoolProviderPass.
 */
final class CommandPoolsPass implements CompilerPassInterface
{
    public function process(ContainerBuilder $container): void
    {
        $pools = [];
        foreach ($container->findTaggedServiceIds(EphpmExtension::POOL_TAG) as $id => $tags) {
            $pool = $container->getDefinition($id);
            $namespace = Pools::argument($container, $pool, 0);
            if (\is_string($namespace) && '' !== $namespace) {
                $pools[$tags[0]['pool'] ?? $id] = ['dsn' => Pools::argument($container, $pool, '$dsn'), 'prefix' => $namespace . ':'];
            }
        }
        ksort($pools);
        foreach (['ephpm.command.clear', 'ephpm.command.locks'] as $command) {
            if ($container->hasDefinition($command)) {
                $container->getDefinition($command)->addMethodCall('setPools', [$pools]);
            }
        }
    }
}
