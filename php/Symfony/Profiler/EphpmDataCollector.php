<?php

namespace Ephpm\Symfony\Profiler;

use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\HttpFoundation\Response;
use Symfony\Component\HttpKernel\DataCollector\DataCollector;

/**
 * The web profiler's "ephpm" panel: what ephpm did for one request. The decorators that
 * ProfilerWiring puts around ephpm's services report here: TracedPool (hits, misses and
 * stale values served, per pool), TracedMemoLock (each stampede-protected computation:
 * computed here, or waited for another process's) and TracedLockStore (each lock
 * acquisition with its wait). Nothing is measured here; it only keeps what they report.
 */
final class EphpmDataCollector extends DataCollector
{
    public const SERVICE_ID = 'ephpm.data_collector';

    /** @var array<string, array{hits: int, misses: int, stale: int}> */
    private array $pools = [];
    /** @var list<array{pool: string, key: string, computed: bool, wait_ms: float}> */
    private array $stampedes = [];
    /** @var list<array{resource: string, mode: string, blocking: bool, acquired: bool, wait_ms: float}> */
    private array $locks = [];

    /** A read of `$pool`: hits, misses and how many of the hits were stale values. */
    public function poolRead(string $pool, int $hits, int $misses, int $stale = 0): void
    {
        $this->pools[$pool] ??= ['hits' => 0, 'misses' => 0, 'stale' => 0];
        $this->pools[$pool]['hits'] += $hits;
        $this->pools[$pool]['misses'] += $misses;
        $this->pools[$pool]['stale'] += $stale;
    }

    /** A miss handed to the stampede protection: computed by this process, or waited for. */
    public function stampede(string $pool, string $key, bool $computed, float $waitMs): void
    {
        $this->stampedes[] = ['pool' => $pool, 'key' => $key, 'computed' => $computed, 'wait_ms' => $waitMs];
    }

    /** How many stampede-protected misses were reported so far (a pool read compares before and after). */
    public function stampedeCount(): int
    {
        return \count($this->stampedes);
    }

    /** A lock acquisition: `mode` "write" or "read", how long it took, whether it got the lock. */
    public function lockAcquisition(string $resource, string $mode, bool $blocking, bool $acquired, float $waitMs): void
    {
        $this->locks[] = ['resource' => $resource, 'mode' => $mode, 'blocking' => $blocking, 'acquired' => $acquired, 'wait_ms' => $waitMs];
    }

    public function collect(Request $request, Response $response, ?\Throwable $exception = null): void
    {
        $this->data = [
            'pools' => $this->pools,
            'stampedes' => $this->stampedes,
            'locks' => $this->locks,
        ];
    }

    public function reset(): void
    {
        $this->data = [];
        $this->pools = $this->stampedes = $this->locks = [];
    }

    public function getName(): string
    {
        return 'ephpm';
    }

    /** @return array<string, array{hits: int, misses: int, stale: int}> */
    public function getPools(): array
    {
        return $this->data['pools'] ?? [];
    }

    public function getHits(): int
    {
        return array_sum(array_column($this->getPools(), 'hits'));
    }

    public function getMisses(): int
    {
        return array_sum(array_column($this->getPools(), 'misses'));
    }

    public function getStale(): int
    {
        return array_sum(array_column($this->getPools(), 'stale'));
    }

    public function getStampedes(): array
    {
        return $this->data['stampedes'] ?? [];
    }

    /** Misses this process computed behind the stampede lock. */
    public function getComputed(): int
    {
        return \count(array_filter($this->getStampedes(), static fn (array $s) => $s['computed']));
    }

    /** Stampedes avoided: misses served what another process computed, after waiting for it. */
    public function getWaited(): int
    {
        return \count($this->getStampedes()) - $this->getComputed();
    }

    public function getLocks(): array
    {
        return $this->data['locks'] ?? [];
    }

    /** Blocking acquisitions: the ones that may wait. */
    public function getLockWaits(): int
    {
        return \count(array_filter($this->getLocks(), static fn (array $l) => $l['blocking']));
    }

    public function getLockWaitMs(): float
    {
        return array_sum(array_column($this->getLocks(), 'wait_ms'));
    }

    /** Whether anything happened worth a toolbar item. */
    public function isEmpty(): bool
    {
        return [] === $this->getPools() && [] === $this->getStampedes() && [] === $this->getLocks();
    }
}
