<?php

namespace EphpmTestApp;

use Symfony\Bundle\FrameworkBundle\Kernel\MicroKernelTrait;
use Symfony\Component\HttpKernel\Kernel as BaseKernel;

/**
 * A Symfony 5.4 application as `symfony new` makes one: MicroKernelTrait reads
 * config/bundles.php, config/packages/*.yaml (then config/packages/<env>/), config/
 * services.yaml and config/routes.yaml. Environments: "test" (ephpm on) and "off"
 * (stampede, session locking and the lock wiring switched off). Cache and logs go to
 * $SYMFONY_VAR_DIR, so that the repository stays clean.
 */
final class Kernel extends BaseKernel
{
    use MicroKernelTrait;

    public function getProjectDir(): string
    {
        return \dirname(__DIR__);
    }

    public function getCacheDir(): string
    {
        return $this->varDir() . '/cache/' . $this->environment;
    }

    public function getLogDir(): string
    {
        return $this->varDir() . '/log';
    }

    private function varDir(): string
    {
        return $_SERVER['SYMFONY_VAR_DIR'] ?? getenv('SYMFONY_VAR_DIR') ?: sys_get_temp_dir() . '/ephpm-symfony-app';
    }
}
