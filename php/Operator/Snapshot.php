<?php

declare(strict_types=1);

namespace Ephpm\Operator;

use Ephpm\Kv;
use Ephpm\KvIterator;

/**
 * What the status page and the metrics show, read once: the store's counters
 * (Kv::stats()) and one bounded walk of its keys (KvIterator, which never holds a shard
 * lock for longer than one shard's walk) for what only the keys tell: entries by prefix,
 * the locks held, the sessions. Past `$walkLimit` keys the walk stops and says so: the
 * per-prefix, lock and session figures are then those of the keys walked.
 */
final class Snapshot
{
    /** Locks listed by name (all of them are counted). */
    public const LOCKS_LISTED = 50;

    /** @var array<string, int|string> Kv::stats() */
    public array $stats;
    /** @var array<string, array{keys: int, bytes: int}> by prefix, most keys first */
    public array $prefixes = [];
    /** @var list<array{name: string, ttl: ?float, fence: int}> */
    public array $locks = [];
    public int $locksHeld = 0;
    public int $sessions = 0;
    public int $walked = 0;
    public bool $truncated = false;

    public function __construct(Kv $kv, public readonly int $walkLimit = 10000)
    {
        $this->stats = $kv->stats();
        foreach (new KvIterator($kv) as $key => $entry) {
            if ($this->walked === $walkLimit) {
                $this->truncated = true;
                break;
            }
            $this->walked++;
            $key = (string) $key;
            $prefix = str_contains($key, ':') ? strstr($key, ':', true) : '';
            $this->prefixes[$prefix] ??= ['keys' => 0, 'bytes' => 0];
            $this->prefixes[$prefix]['keys']++;
            $this->prefixes[$prefix]['bytes'] += $entry['size'];
            if ($entry['fence'] !== null) {
                $this->locksHeld++;
                if (count($this->locks) < self::LOCKS_LISTED) {
                    $this->locks[] = ['name' => $key, 'ttl' => $entry['ttl'], 'fence' => $entry['fence']];
                }
            }
            if (str_starts_with($key, 'session:')) {
                $this->sessions++;
            }
        }
        uksort($this->prefixes, fn ($a, $b) => [$this->prefixes[$b]['keys'], $a] <=> [$this->prefixes[$a]['keys'], $b]);
        usort($this->locks, fn ($a, $b) => strcmp($a['name'], $b['name']));
    }

    /** The store the entry scripts show: EPHPM_STATUS_DSN's, else the pool's default. */
    public static function ofConfiguredStore(): self
    {
        $dsn = getenv('EPHPM_STATUS_DSN');
        $limit = (int) (getenv('EPHPM_STATUS_WALK_LIMIT') ?: 10000);

        return new self(new Kv(is_string($dsn) && $dsn !== '' ? $dsn : null), max(1, $limit));
    }

    /** Hits over lookups, 0 to 1; null before the first lookup. */
    public function hitRate(): ?float
    {
        $lookups = (int) $this->stats['hits'] + (int) $this->stats['misses'];

        return $lookups === 0 ? null : (int) $this->stats['hits'] / $lookups;
    }
}
