<?php

namespace EphpmProfilerTest;

use Ephpm\Kv;
use Ephpm\Symfony\Profiler\ProfilerWiring;
use Symfony\Bundle\FrameworkBundle\FrameworkBundle;
use Symfony\Bundle\FrameworkBundle\Kernel\MicroKernelTrait;
use Symfony\Bundle\TwigBundle\TwigBundle;
use Symfony\Bundle\WebProfilerBundle\WebProfilerBundle;
use Symfony\Component\DependencyInjection\Compiler\CompilerPassInterface;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\Loader\Configurator\ContainerConfigurator;
use Symfony\Component\HttpFoundation\Response;
use Symfony\Component\HttpKernel\Kernel;
use Symfony\Component\Routing\Loader\Configurator\RoutingConfigurator;
use Symfony\Contracts\Cache\ItemInterface;

/**
 * A Symfony 5.4 kernel (FrameworkBundle, TwigBundle, WebProfilerBundle, profiler on) with
 * ephpm's services tagged by hand (config.yaml) and the ephpm panel. Pages:
 * /warm fills the pools (and a value that goes stale a second later), /cold computes the
 * key "cold" slowly (until /page waits for it), /page does what the panel shows, /peek
 * reads the stale value again. The processes meet through the Kv "profiler-test:".
 * EPHPM_PROFILER_WIRING=off leaves ProfilerWiring out (the panel's absence, on purpose).
 */
final class ProfilerKernel extends Kernel
{
    use MicroKernelTrait;

    public function registerBundles(): iterable
    {
        return [new FrameworkBundle(), new TwigBundle(), new WebProfilerBundle()];
    }

    public function getProjectDir(): string
    {
        return __DIR__;
    }

    public function getCacheDir(): string
    {
        return $this->varDir() . '/cache';
    }

    public function getLogDir(): string
    {
        return $this->varDir() . '/log';
    }

    protected function build(ContainerBuilder $container): void
    {
        // What EphpmBundle's PoolProviderPass does for its pools: the framework.cache
        // pool "stale.cache" is an ephpm pool.
        $container->addCompilerPass(new class() implements CompilerPassInterface {
            public function process(ContainerBuilder $container): void
            {
                $container->getDefinition('stale.cache')->addTag('ephpm.pool', ['pool' => 'stale']);
            }
        });
        if ('off' !== getenv('EPHPM_PROFILER_WIRING')) {
            ProfilerWiring::register($container);
        }
    }

    protected function configureContainer(ContainerConfigurator $container): void
    {
        $container->import(__DIR__ . '/config.yaml');
    }

    protected function configureRoutes(RoutingConfigurator $routes): void
    {
        $routes->import('@WebProfilerBundle/Resources/config/routing/wdt.xml')->prefix('/_wdt');
        $routes->import('@WebProfilerBundle/Resources/config/routing/profiler.xml')->prefix('/_profiler');
        foreach (['warm', 'cold', 'page', 'peek'] as $page) {
            $routes->add($page, '/' . $page)->controller('kernel::' . $page);
        }
    }

    public function warm(): Response
    {
        $app = $this->container->get('app.pool');
        $stale = $this->container->get('stale.cache');
        $app->clear();
        $stale->clear();
        (new Kv(null, 'profiler-test:'))->clear();
        $app->get('a', fn () => 'A');
        $app->get('b', fn () => 'B');
        $stale->get('report', function (ItemInterface $item) {
            $item->expiresAfter(1);
            return 'report v1';
        });
        return new Response("warm\n");
    }

    public function cold(): Response
    {
        $signals = new Kv(null, 'profiler-test:');
        $value = $this->container->get('app.pool')->get('cold', function () use ($signals) {
            $signals->set('cold-computing', 1);
            self::await($signals, 'page-at-cold');
            usleep(300_000); // /page asks for "cold" within these 300 ms, and waits
            return 'cold value';
        });
        return new Response("cold: $value\n");
    }

    public function page(): Response
    {
        $signals = new Kv(null, 'profiler-test:');
        $app = $this->container->get('app.pool');
        $stale = $this->container->get('stale.cache');
        $out = [];
        $out[] = 'a: ' . $app->get('a', fn () => 'A recomputed');                   // hit
        $out[] = 'b: ' . $app->getItem('b')->get();                                 // hit
        $out[] = 'absent: ' . json_encode($app->getItem('absent')->isHit());        // miss
        $out[] = 'fresh: ' . $app->get('fresh', fn () => 'fresh value');            // miss, computed
        $out[] = 'report: ' . $stale->get('report', fn () => 'report v2', null, $meta)
            . ($meta['stale'] ? ' (stale)' : '');                                   // stale hit
        $signals->set('page-wants-lock', 1);
        $lock = $this->container->get('app.lock_factory')->createLock('invoice-42', 30);
        $out[] = 'lock: ' . json_encode($lock->acquire(true));                      // waits for the holder
        $lock->release();
        $read = $this->container->get('app.read_lock_factory')->createLock('catalogue');
        $out[] = 'read lock: ' . json_encode($read->acquireRead(true));             // a read lock
        $read->release();
        $signals->set('page-at-cold', 1);
        $out[] = 'cold: ' . $app->get('cold', fn () => 'cold computed by /page');   // miss, waited
        return new Response(implode("\n", $out) . "\n");
    }

    public function peek(): Response
    {
        return new Response('report: ' . $this->container->get('stale.cache')->get('report', fn () => 'computed by /peek') . "\n");
    }

    /** Waits (at most 10 s) until another process sets `$key`. */
    public static function await(Kv $signals, string $key): void
    {
        for ($deadline = microtime(true) + 10; !$signals->has($key) && microtime(true) < $deadline;) {
            usleep(2000);
        }
    }

    private function varDir(): string
    {
        return getenv('EPHPM_PROFILER_VAR') ?: sys_get_temp_dir() . '/ephpm-profiler-app';
    }
}
