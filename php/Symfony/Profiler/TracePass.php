<?php

namespace Ephpm\Symfony\Profiler;

use Symfony\Component\DependencyInjection\ChildDefinition;
use Symfony\Component\DependencyInjection\Compiler\CompilerPassInterface;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\Reference;
use Symfony\Component\Lock\BlockingSharedLockStoreInterface;
use Symfony\Component\Lock\BlockingStoreInterface;
use Symfony\Component\Lock\SharedLockStoreInterface;

/**
 * With the profiler enabled (a `profiler` service): decorates each ephpm pool with
 * TracedPool, each MemoLock callback wrapper with TracedMemoLock and each lock store with
 * TracedLockStore (with read locks: TracedSharedLockStore, TracedBlockingSharedLockStore,
 * as the store has them; a store that cannot block is left untraced); adds the
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
            if (null !== $traced = self::lockStoreTracer(self::classOf($container, $id))) {
                $this->decorate($container, $id, $traced, [$collector]);
            }
        }
    }

    /**
     * The decorator with exactly the store's lock interfaces (Lock picks its way of
     * acquiring by them); null for a store that cannot block, which is left untraced.
     */
    private static function lockStoreTracer(string $class): ?string
    {
        return match (true) {
            !is_subclass_of($class, BlockingStoreInterface::class) => null,
            is_subclass_of($class, BlockingSharedLockStoreInterface::class) => TracedBlockingSharedLockStore::class,
            is_subclass_of($class, SharedLockStoreInterface::class) => TracedSharedLockStore::class,
            default => TracedLockStore::class,
        };
    }

    /** The class of a service, looked up through the parents of a child definition. */
    private static function classOf(ContainerBuilder $container, string $id): string
    {
        $definition = $container->findDefinition($id);
        while (null === $definition->getClass() && $definition instanceof ChildDefinition) {
            $definition = $container->findDefinition($definition->getParent());
        }
        return (string) $container->getParameterBag()->resolveValue($definition->getClass());
    }

    private function decorate(ContainerBuilder $container, string $id, string $class, array $arguments): void
    {
        $container->register($traced = $id . '.ephpm_traced', $class)
            ->setDecoratedService($id)
            ->setArguments([new Reference($traced . '.inner'), ...$arguments]);
    }
}
