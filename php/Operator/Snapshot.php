<?php

declare(strict_types=1);

namespace Ephpm\Operator;

use Ephpm\Kv;
use Ephpm\KvIterator;

/**
 * What the status page and the metrics show of one store, read once: the store's
 * counters (Kv::stats()) and one bounded walk of its keys (KvIterator, which never holds
 * a shard lock for longer than one shard's walk) for what only the keys tell: entries by
 * prefix, the locks held, the sessions, the largest entries. Past `$walkLimit` keys the
 * walk stops and says so: those figures are then of the keys walked.
 *
 * A store that cannot be opened or read is a Snapshot too, with `$error` set and no
 * figures: the page says why, the metrics say `ephpm_up 0`.
 */
final class Snapshot
{
    /** Locks listed by name (all of them are counted). */
    public const LOCKS_LISTED = 50;

    /** Largest entries listed. */
    public const LARGEST_LISTED = 10;

    /** @var array<string, mixed> Kv::stats(); empty when $error is set */
    public array $stats = [];
    /** @var array<string, array{keys: int, bytes: int}> by prefix, most keys first */
    public array $prefixes = [];
    /** @var list<array{name: string, ttl: ?float, fence: int}> */
    public array $locks = [];
    /** @var list<array{key: string, size: int, ttl: ?float}> largest first */
    public array $largest = [];
    public int $locksHeld = 0;
    public int $sessions = 0;
    public int $walked = 0;
    public bool $truncated = false;
    /** When the counters were read: Unix time, microseconds (the rates' time base). */
    public float $time;
    /** Why the store could not be read, or null. */
    public ?string $error = null;

    /**
     * @param string $store the store's name as shown (its DSN, credentials masked)
     * @param ?Kv $kv the store, null when it could not be opened ($error says why)
     */
    public function __construct(public readonly string $store, public readonly ?Kv $kv, public readonly int $walkLimit = 10000)
    {
        $this->time = microtime(true);
        if ($kv === null) {
            return;
        }
        try {
            $this->stats = $kv->stats();
            $this->walk($kv);
        } catch (\Throwable $e) {
            $this->stats = [];
            $this->error = $e->getMessage();
        }
    }

    private function walk(Kv $kv): void
    {
        // The largest entries so far, smallest on top: each key costs one comparison,
        // and memory stays LARGEST_LISTED entries however many keys are walked.
        $largest = new \SplMinHeap();
        foreach (new KvIterator($kv) as $key => $entry) {
            if ($this->walked === $this->walkLimit) {
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
            if (count($largest) < self::LARGEST_LISTED || $entry['size'] > $largest->top()[0]) {
                $largest->insert([$entry['size'], $key, $entry['ttl']]);
                if (count($largest) > self::LARGEST_LISTED) {
                    $largest->extract();
                }
            }
        }
        foreach ($largest as [$size, $key, $ttl]) {
            array_unshift($this->largest, ['key' => $key, 'size' => $size, 'ttl' => $ttl]);
        }
        uksort($this->prefixes, fn ($a, $b) => [$this->prefixes[$b]['keys'], $a] <=> [$this->prefixes[$a]['keys'], $b]);
        usort($this->locks, fn ($a, $b) => strcmp($a['name'], $b['name']));
    }

    /**
     * The stores the entry scripts show: those EPHPM_STATUS_DSN lists (DSNs separated
     * by whitespace, in that order; a DSN never holds a space), else the pool's default
     * (null: `ephpm.dsn`).
     *
     * @return list<?string>
     */
    public static function dsns(): array
    {
        $list = getenv('EPHPM_STATUS_DSN');
        $dsns = is_string($list) ? (preg_split('/\s+/', $list, -1, PREG_SPLIT_NO_EMPTY) ?: []) : [];

        // Once each: a store listed twice would be two series of one name in the metrics.
        return $dsns === [] ? [null] : array_values(array_unique($dsns));
    }

    /** A store's name as shown: its DSN (null: the pool's default), credentials masked. */
    public static function name(?string $dsn): string
    {
        return Escape::dsn($dsn ?? (string) ini_get('ephpm.dsn'));
    }

    /**
     * A snapshot of each store of dsns(); one that cannot be opened is listed with its
     * error.
     *
     * @return list<self>
     */
    public static function configured(): array
    {
        $limit = max(1, (int) (getenv('EPHPM_STATUS_WALK_LIMIT') ?: 10000));
        $snapshots = [];
        foreach (self::dsns() as $dsn) {
            try {
                $kv = new Kv($dsn);
            } catch (\Throwable $e) {
                $s = new self(self::name($dsn), null, $limit);
                $s->error = $e->getMessage();
                $snapshots[] = $s;
                continue;
            }
            $snapshots[] = new self(self::name($dsn), $kv, $limit);
        }

        return $snapshots;
    }

    /** Whether the store counts `$name` (Kv::stats()'s `not_counted`). */
    public function counts(string $name): bool
    {
        return !in_array($name, $this->stats['not_counted'] ?? [], true);
    }

    /** A counter of Kv::stats(), 0 when the build does not have it. */
    public function stat(string $name): int
    {
        return (int) ($this->stats[$name] ?? 0);
    }

    /** Hits over lookups, 0 to 1; null before the first lookup. */
    public function hitRate(): ?float
    {
        $lookups = $this->stat('hits') + $this->stat('misses');

        return $lookups === 0 ? null : $this->stat('hits') / $lookups;
    }
}
