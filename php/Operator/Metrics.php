<?php

declare(strict_types=1);

namespace Ephpm\Operator;

/**
 * The status page's numbers in Prometheus' text exposition format 0.0.4, named by its
 * conventions: base units (bytes, seconds), `_total` on counters, one metric per thing
 * measured with labels for its parts. The counters are the store's since its segment was
 * made (Redis: its server's; a cluster: this host's copy), so they only go up until the
 * store is removed, which Prometheus' rate() reads as a counter reset.
 */
final class Metrics
{
    public const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

    /** Prefixes exported as labels, most keys first: bounded, since each is a series. */
    public const PREFIXES_EXPORTED = 50;

    /**
     * Runs of text a label may carry as it is: printable ASCII but the backslash, and
     * well-formed UTF-8 sequences but the C1 controls (U+0080-U+009F); else one byte.
     */
    private const LABEL_TEXT = '/[\x20-\x5b\x5d-\x7e]+'
        . '|(?:\xc2[\xa0-\xbf]|[\xc3-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]'
        . '|[\xe1-\xec\xee\xef][\x80-\xbf]{2}|\xed[\x80-\x9f][\x80-\xbf]'
        . '|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}|\xf4[\x80-\x8f][\x80-\xbf]{2})+'
        . '|(.)/s';

    public function render(Snapshot $s): string
    {
        $st = $s->stats;
        $out = '';
        $gauge = static function (string $name, string $help, array $samples) use (&$out): void {
            $out .= self::family($name, 'gauge', $help, $samples);
        };
        $counter = static function (string $name, string $help, int|float $value) use (&$out): void {
            $out .= self::family($name . '_total', 'counter', $help, [['', $value]]);
        };

        $gauge('ephpm_info', 'The store this endpoint shows, and the extension version.', [
            [self::labels(['backend' => (string) $st['backend'], 'version' => (string) phpversion('ephpm')]), 1],
        ]);
        $gauge('ephpm_memory_bytes', 'Bytes of the store: its size and what entries use.', [
            [self::labels(['kind' => 'size']), (int) $st['memory_size']],
            [self::labels(['kind' => 'used']), (int) $st['memory_used']],
        ]);
        $gauge('ephpm_entries', 'Entries in the store.', [['', (int) $st['entries']]]);
        $gauge('ephpm_shards', 'Shards of the store.', [['', (int) $st['shards']]]);
        $gauge('ephpm_shards_locked', 'Shards whose lock a process held when this was read (one held across scrapes: a stopped or stuck process).', [['', (int) ($st['shards_locked'] ?? 0)]]);
        $counter('ephpm_hits', 'Lookups that found their key.', (int) $st['hits']);
        $counter('ephpm_misses', 'Lookups that did not find their key.', (int) $st['misses']);
        $counter('ephpm_evictions', 'Entries evicted to make room.', (int) $st['evictions']);
        $counter('ephpm_expirations', 'Entries dropped because their TTL passed.', (int) $st['expirations']);
        $counter('ephpm_repairs', 'Shards repaired after a process died holding their lock.', (int) $st['repairs']);
        $counter('ephpm_resets', 'Shards too damaged to repair, emptied.', (int) $st['resets']);
        $counter('ephpm_lock_waits', 'Lock acquisitions that found the lock held and waited (MemoLock, sessions, Ephpm\\Lock).', (int) ($st['lock_waits'] ?? 0));
        $counter('ephpm_lock_timeouts', 'Lock waits that ran out without the lock.', (int) ($st['lock_timeouts'] ?? 0));
        $counter('ephpm_stampedes_avoided', 'Computations not done: a waiter found the value another process computed.', (int) ($st['stampedes_avoided'] ?? 0));
        $counter('ephpm_full_refusals', 'Writes refused because the store had no room even after evicting.', (int) ($st['full_refusals'] ?? 0));
        $gauge('ephpm_age_seconds', 'Seconds since the store began counting (its segment was made; Redis: its server started); 0 unknown.', [['', (int) ($st['age_seconds'] ?? 0)]]);
        $gauge('ephpm_max_item_size_bytes', 'The largest value a write can store; 0 unknown.', [['', (int) ($st['max_item_size'] ?? 0)]]);
        $gauge('ephpm_locks_held', 'Locks held now (among the keys walked).', [['', $s->locksHeld]]);
        $gauge('ephpm_sessions', 'Sessions stored (among the keys walked).', [['', $s->sessions]]);
        $prefixes = [];
        foreach (array_slice($s->prefixes, 0, self::PREFIXES_EXPORTED, true) as $prefix => $p) {
            $prefixes[] = [self::labels(['prefix' => (string) $prefix]), $p['keys']];
        }
        $gauge('ephpm_prefix_entries', 'Entries by key prefix (before the first ":"), among the keys walked.', $prefixes);
        $gauge('ephpm_walk_keys', 'Keys walked for the locks, sessions and prefixes above.', [['', $s->walked]]);
        $gauge('ephpm_walk_truncated', '1 when the walk stopped at its limit before the last key.', [['', (int) $s->truncated]]);

        return $out;
    }

    /** @param list<array{0: string, 1: int|float}> $samples label sets and values */
    private static function family(string $name, string $type, string $help, array $samples): string
    {
        $text = "# HELP $name " . strtr($help, ['\\' => '\\\\', "\n" => '\n']) . "\n# TYPE $name $type\n";
        foreach ($samples as [$labels, $value]) {
            $text .= $name . $labels . ' ' . $value . "\n";
        }

        return $text;
    }

    /** @param array<string, string> $labels */
    private static function labels(array $labels): string
    {
        $parts = [];
        foreach ($labels as $k => $v) {
            $parts[] = $k . '="' . strtr(self::labelText($v), ['\\' => '\\\\', '"' => '\\"', "\n" => '\n']) . '"';
        }

        return '{' . implode(',', $parts) . '}';
    }

    /**
     * A label's value as text: its bytes (a key prefix, which any client may choose)
     * kept where they are printable UTF-8, a backslash doubled, and any other byte (a
     * control character, a byte of invalid UTF-8) written `\xNN`. Prometheus takes only
     * UTF-8 and rejects the whole scrape otherwise; and since every backslash of the text
     * starts an escape, two different prefixes never become one series.
     */
    private static function labelText(string $bytes): string
    {
        return (string) preg_replace_callback(
            self::LABEL_TEXT,
            static fn (array $m): string => !isset($m[1]) ? $m[0]
                : ($m[1] === '\\' ? '\\\\' : sprintf('\\x%02x', ord($m[1]))),
            $bytes,
        );
    }
}
