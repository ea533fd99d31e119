<?php

namespace Ephpm\Laravel;

use Ephpm\Kv;
use Ephpm\StaleCache;
use RuntimeException;

/**
 * The value in a key written by `Cache::flexible()`, for `Cache::get()`, `many()` and
 * everything built on them: such a key holds Ephpm\StaleCache's record (the value and
 * its times), and Laravel 11 returns the value of a flexible key while it is fresh or
 * stale, as for any key.
 *
 * StaleCache reads the record itself (nothing here knows its layout beyond the marker
 * that tells a record from a plain value): a reader whose computation never yields a
 * value. Fresh, it serves the value; stale, it is served too (the reader may be elected
 * to refresh inline: its computation throws, which keeps the stale value, and the lock is
 * released at once, so flexible()'s own refresh runs on the next call); gone or expired,
 * the computation's exception says "missing".
 */
final class FlexibleValue
{
    /** What every StaleCache record starts with (its marker and format version, src/stale.rs). */
    private const MARKER = 'eSW1';

    /**
     * `$raw` as read from `$key`, or the value inside it when it is a flexible() record;
     * null when the record is past its stale window.
     */
    public static function of(Kv $kv, string $key, mixed $raw): mixed
    {
        if (!is_string($raw) || strncmp($raw, self::MARKER, 4) !== 0) {
            return $raw;
        }
        // The one exception the reader's computation throws, known by identity.
        $missing = new RuntimeException('not computed: read only');
        $reader = new StaleCache($kv, 0, 0, null, false, new class ($missing) {
            public function __construct(private RuntimeException $missing)
            {
            }

            /** The reader's own "refresh failed" is expected; anything else is said. */
            public function warning(string $message, array $context = []): void
            {
                if (($context['exception'] ?? null) !== $this->missing) {
                    trigger_error($message, E_USER_WARNING);
                }
            }
        });
        try {
            return $reader->get($key, static fn () => throw $missing, 1);
        } catch (RuntimeException $e) {
            if ($e !== $missing) {
                throw $e;
            }
            // Missing to StaleCache: expired since it was read, or a plain string that
            // merely starts with the marker (then it is still there, unchanged).
            return $kv->get($key) === $raw ? $raw : null;
        }
    }
}
