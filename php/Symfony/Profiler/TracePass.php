<?php

namespace Ephpm\Symfony\Profiler;

use Symfony\Component\DependencyInjection\Compiler\CompilerPassInterface;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\Reference;
use Symfony\Component\Lock\BlockingSharedLockStoreInterface;
use Symfony\Component\Lock\SharedLockStoreInterface;

/**
 * With the profiler enabled (a `profiler` service): decorates each ephpm pool with
 * TracedPool, each MemoLock callback wrapper with TracedMemoLock and each lock store with
 * TracedLockStore (TracedSharedLockStore for one with blocking read locks); adds the
 * panel's template folder to Twig as `@EphpmProfiler`. Without the profiler it does
 * nothing, and the unused collector is removed with the other unused services.
 */
final class TracePass implements CompilerPassInterface
{
    public function process(ContainerBuilder $container): void
    {
        if (!$container->has('profiler') || !$container->hasDefinition(EphpmDataCollector::SERVICE_ID)) {
            return;
        }
        if ($container->hasDefinition('twig.loader.native_filesystem')) {
            $container->getDefinition('twig.loader.native_filesystem')
                ->addMethodCall('addPath', [__DIR__ . '/Resources/views', 'EphpmProfiler']);
        }
        $collector = new Reference(EphpmDataCollector::SERVICE_ID);
        foreach ($container->findTaggedServiceIds('ephpm.pool') as $id => $tags) {
            $this->decorate($container, $id, TracedPool::class, [$tags[0]['pool'] ?? $id, $collector]);
        }
        foreach ($container->findTaggedServiceIds('ephpm.memo_lock') as $id => $tags) {
            $this->decorate($container, $id, TracedMemoLock::class, [$tags[0]['pool'] ?? $id, $collector]);
        }
        foreach (array_keys($container->findTaggedServiceIds('ephpm.lock_store')) as $id) {
            $class = $container->getParameterBag()->resolveValue($container->findDefinition($id)->getClass());
            $shared = is_subclass_of($class, SharedLockStoreInterface::class);
            if ($shared && !is_subclass_of($class, BlockingSharedLockStoreInterface::class)) {
                continue; // TracedSharedLockStore would claim blocking read locks the store lacks
            }
            $this->decorate($container, $id, $shared ? TracedSharedLockStore::class : TracedLockStore::class, [$collector]);
        }
    }

    private function decorate(ContainerBuilder $container, string $id, string $class, array $arguments): void
    {
        $container->register($traced = $id . '.ephpm_traced', $class)
            ->setDecoratedService($id)
            ->setArguments([new Reference($traced . '.inner'), ...$arguments]);
    }
}
