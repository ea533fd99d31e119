<?php

declare(strict_types=1);

namespace Ephpm\Operator;

/**
 * The status page's numbers in Prometheus' text exposition format 0.0.4, named by its
 * conventions: base units (bytes, seconds), `_total` on counters, one metric per thing
 * measured with labels for its parts. Every series carries `store` (the store's DSN,
 * credentials masked: Snapshot::name()), and `ephpm_up{store}` says whether the store
 * could be read (0: only that series for it). What a backend does not count (Kv::stats()'s
 * `not_counted`, a size of 0: no limit) has no sample, rather than a 0 that reads as a
 * figure. The counters are the store's since its segment was made (Redis: its server's;
 * a cluster: this host's copy), so they only go up until the store is removed, which
 * Prometheus' rate() reads as a counter reset.
 */
final class Metrics
{
    public const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

    /** Prefixes exported as labels per store, most keys first: bounded, since each is a series. */
    public const PREFIXES_EXPORTED = 50;

    /** Counters of Kv::stats() exported as `ephpm_NAME_total`, with their help. */
    private const COUNTERS = [
        'hits' => 'Lookups that found their key.',
        'misses' => 'Lookups that did not find their key.',
        'evictions' => 'Entries evicted to make room.',
        'expirations' => 'Entries dropped because their TTL passed.',
        'repairs' => 'Shards repaired after a process died holding their lock.',
        'resets' => 'Shards too damaged to repair, emptied.',
        'lock_waits' => 'Lock acquisitions that found the lock held and waited (MemoLock, sessions, Ephpm\\Lock).',
        'lock_timeouts' => 'Lock waits that ran out without the lock.',
        'stampedes_avoided' => 'Computations not done: a waiter found the value another process computed.',
        'full_refusals' => 'Writes refused because the store had no room even after evicting.',
    ];

    /** @var array<string, array{type: string, help: string, samples: list<string>}> by name, in order of first use */
    private array $families = [];

    /** @param list<Snapshot> $stores */
    public function render(array $stores): string
    {
        foreach ($stores as $s) {
            $this->add('ephpm_up', 'gauge', '1 when the store could be read for this scrape, else 0.', ['store' => $s->store], $s->error === null ? 1 : 0);
        }
        foreach ($stores as $s) {
            if ($s->error === null) {
                $this->store($s);
            }
        }
        $out = '';
        foreach ($this->families as $name => $f) {
            $out .= "# HELP $name " . strtr($f['help'], ['\\' => '\\\\', "\n" => '\n']) . "\n# TYPE $name {$f['type']}\n"
                . implode('', $f['samples']);
        }

        return $out;
    }

    /**
     * One sample; samples of one name are written together, after its HELP and TYPE,
     * whatever order they come in. A section of its own (a cluster's members) adds its
     * series with this.
     *
     * @param array<string, string> $labels values as bytes (escaped here)
     */
    public function add(string $name, string $type, string $help, array $labels, int|float $value): void
    {
        $this->families[$name] ??= ['type' => $type, 'help' => $help, 'samples' => []];
        $this->families[$name]['samples'][] = $name . self::labels($labels) . ' ' . $value . "\n";
    }

    private function store(Snapshot $s): void
    {
        $st = $s->stats;
        $store = ['store' => $s->store];
        $gauge = function (string $name, string $help, int $value, array $labels = []) use ($store): void {
            $this->add($name, 'gauge', $help, $store + $labels, $value);
        };
        $this->add('ephpm_info', 'gauge', 'The store this endpoint shows, and the extension version.',
            $store + ['backend' => (string) $st['backend'], 'version' => (string) phpversion('ephpm')], 1);
        $bytes = 'Bytes of the store: its size (none without a limit: Redis with no maxmemory) and what entries use.';
        if ($s->stat('memory_size') > 0) {
            $gauge('ephpm_memory_bytes', $bytes, $s->stat('memory_size'), ['kind' => 'size']);
        }
        $gauge('ephpm_memory_bytes', $bytes, $s->stat('memory_used'), ['kind' => 'used']);
        $gauge('ephpm_entries', 'Entries in the store.', $s->stat('entries'));
        $gauge('ephpm_shards', 'Shards of the store (Redis: its masters).', $s->stat('shards'));
        if ($s->counts('shards_locked')) {
            $gauge('ephpm_shards_locked', 'Shards whose lock a process held when this was read (one held across scrapes: a stopped or stuck process).', $s->stat('shards_locked'));
        }
        if ($s->counts('shards_writing')) {
            $gauge('ephpm_shards_writing', 'Of those, shards whose holder was changing entries: their readers wait too (one across scrapes: a writer stopped mid-change).', $s->stat('shards_writing'));
        }
        foreach (self::COUNTERS as $name => $help) {
            if ($s->counts($name)) {
                $this->add("ephpm_{$name}_total", 'counter', $help, $store, $s->stat($name));
            }
        }
        $gauge('ephpm_age_seconds', 'Seconds since the store began counting (its segment was made; Redis: its server started); 0 unknown.', $s->stat('age_seconds'));
        $gauge('ephpm_max_item_size_bytes', 'The largest value a write can store; 0 unknown.', $s->stat('max_item_size'));
        $gauge('ephpm_locks_held', 'Locks held now (among the keys walked).', $s->locksHeld);
        $gauge('ephpm_sessions', 'Sessions stored (among the keys walked).', $s->sessions);
        foreach (array_slice($s->prefixes, 0, self::PREFIXES_EXPORTED, true) as $prefix => $p) {
            $gauge('ephpm_prefix_entries', 'Entries by key prefix (before the first ":"), among the keys walked.', $p['keys'], ['prefix' => (string) $prefix]);
        }
        $gauge('ephpm_walk_keys', 'Keys walked for the locks, sessions and prefixes above.', $s->walked);
        $gauge('ephpm_walk_truncated', '1 when the walk stopped at its limit before the last key.', (int) $s->truncated);
        Section\Members::metrics($s, $this);
    }

    /**
     * Labels as Prometheus reads them: each value made text (Escape::text: printable
     * UTF-8 kept, other bytes `\xNN`, a backslash doubled), then a backslash, a quote
     * and a newline escaped as the format asks.
     *
     * @param array<string, string> $labels
     */
    private static function labels(array $labels): string
    {
        $parts = [];
        foreach ($labels as $k => $v) {
            $parts[] = $k . '="' . strtr(Escape::text($v), ['\\' => '\\\\', '"' => '\\"', "\n" => '\n']) . '"';
        }

        return $parts === [] ? '' : '{' . implode(',', $parts) . '}';
    }
}
