<?php

namespace Ephpm\Symfony;

use Ephpm\Symfony\Bundle\DependencyInjection\Compiler\CommandPoolsPass;
use Ephpm\Symfony\Bundle\DependencyInjection\Compiler\FrameworkDsnPass;
use Ephpm\Symfony\Bundle\DependencyInjection\Compiler\LockFactoryPass;
use Ephpm\Symfony\Bundle\DependencyInjection\Compiler\PoolProviderPass;
use Ephpm\Symfony\Bundle\DependencyInjection\Compiler\StampedePass;
use Ephpm\Symfony\Bundle\DependencyInjection\EphpmExtension;
use Ephpm\Symfony\Profiler\ProfilerWiring;
use Symfony\Component\DependencyInjection\Compiler\PassConfig;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\Extension\ExtensionInterface;
use Symfony\Component\HttpKernel\Bundle\Bundle;

/**
 * ephpm for Symfony 5.4+: `cache.adapter.ephpm` pools whose `provider` may be an ephpm
 * store, stampede protection (Ephpm\MemoLock) on every ephpm pool, lock.factory on
 * ephpm's locks, ephpm.session.handler, and the ephpm:stats, ephpm:clear and ephpm:locks
 * commands — all from the `ephpm:` config (see docs/symfony.md, "Symfony in five lines").
 */
final class EphpmBundle extends Bundle
{
    public function build(ContainerBuilder $container): void
    {
        // Around Symfony's CachePoolPass (TYPE_BEFORE_OPTIMIZATION, priority 32): providers
        // before it, callback wrappers after it (it decides the namespaces).
        $container->addCompilerPass(new PoolProviderPass(), PassConfig::TYPE_BEFORE_OPTIMIZATION, 33);
        $container->addCompilerPass(new StampedePass(), PassConfig::TYPE_BEFORE_OPTIMIZATION, 31);
        $container->addCompilerPass(new CommandPoolsPass(), PassConfig::TYPE_BEFORE_OPTIMIZATION, 31);
        $container->addCompilerPass(new LockFactoryPass());
        $container->addCompilerPass(new FrameworkDsnPass());
        // config:dump-reference and config:debug call build() again on an already
        // compiled container, which takes passes but no new definitions.
        if (class_exists(ProfilerWiring::class) && !$container->isCompiled()) {
            ProfilerWiring::register($container);
        }
    }

    public function getContainerExtension(): ?ExtensionInterface
    {
        return $this->extension ??= new EphpmExtension();
    }
}
