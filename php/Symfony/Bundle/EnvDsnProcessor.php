<?php

namespace Ephpm\Symfony\Bundle;

use Symfony\Component\DependencyInjection\EnvVarProcessorInterface;

/**
 * `%env(ephpm_store:NAME)%`: the env value NAME with `ephpm://…` turned into the DSN of
 * that store (EphpmDsn), any other DSN left as it is. EphpmBundle puts this prefix on a
 * store reference that is an env var (a pool's `provider: '%env(CACHE_DSN)%'`), because
 * only at run time does the value say whether it is `ephpm://`.
 */
final class EnvDsnProcessor implements EnvVarProcessorInterface
{
    public const PREFIX = 'ephpm_store';

    /** @param array<string, ?string> $stores `ephpm.stores`, name => DSN. */
    public function __construct(private array $stores)
    {
    }

    public function getEnv(string $prefix, string $name, \Closure $getEnv): ?string
    {
        return EphpmDsn::resolve((string) $getEnv($name), $this->stores);
    }

    public static function getProvidedTypes(): array
    {
        return [self::PREFIX => 'string'];
    }
}
