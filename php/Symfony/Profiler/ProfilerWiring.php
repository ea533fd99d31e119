<?php

namespace Ephpm\Symfony\Profiler;

use Symfony\Component\DependencyInjection\Compiler\PassConfig;
use Symfony\Component\DependencyInjection\ContainerBuilder;

/**
 * Adds the "ephpm" web profiler panel to a container: the collector service (tag
 * `data_collector`) and TracePass, which, when the profiler is enabled, puts the
 * counting decorators around the services tagged `ephpm.pool` (attribute `pool`),
 * `ephpm.memo_lock` and `ephpm.lock_store`. EphpmBundle::build() calls it; an
 * application wiring ephpm by hand can call it from its kernel's build().
 */
final class ProfilerWiring
{
    public const TEMPLATE = '@EphpmProfiler/ephpm.html.twig';

    public static function register(ContainerBuilder $container): void
    {
        $container->register(EphpmDataCollector::SERVICE_ID, EphpmDataCollector::class)
            ->addTag('data_collector', ['template' => self::TEMPLATE, 'id' => 'ephpm', 'priority' => 250]);
        // After EphpmBundle's StampedePass (priority 31), which registers the MemoLock
        // services, and before the decorations are resolved (TYPE_OPTIMIZE).
        $container->addCompilerPass(new TracePass(), PassConfig::TYPE_BEFORE_OPTIMIZATION, -8);
    }
}
