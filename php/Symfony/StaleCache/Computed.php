<?php

namespace Ephpm\Symfony\StaleCache;

use Symfony\Component\Cache\CacheItem;

/**
 * How StaleCacheAdapter stores a value computed by get() together with Symfony's item
 * metadata (`expiry`, a timestamp, and `ctime`, the milliseconds the computation took),
 * which Symfony's pools keep beside every computed value and hand back from getItem()
 * and get(…, $metadata). StaleCache's record keeps only its own times, so the metadata
 * travel inside the value: a two-entry array whose first key holds a NUL byte, which no
 * Symfony cache key and no array a user builds by accident has.
 */
final class Computed
{
    private const META = "\0ephpm:meta";

    /** The value to store for `$value`, computed in `$ctimeMs` and expiring at `$expiry`. */
    public static function wrap(mixed $value, float $expiry, int $ctimeMs): array
    {
        return [self::META => [$expiry, $ctimeMs], 'value' => $value];
    }

    /**
     * @return array{mixed, array<string, float|int>} The value as stored by the caller, and
     *                                                  its metadata (empty for a plain value).
     */
    public static function unwrap(mixed $stored): array
    {
        if (\is_array($stored) && 2 === \count($stored) && self::META === array_key_first($stored) && \array_key_exists('value', $stored)) {
            [$expiry, $ctime] = $stored[self::META];

            return [$stored['value'], [CacheItem::METADATA_EXPIRY => $expiry, CacheItem::METADATA_CTIME => $ctime]];
        }

        return [$stored, []];
    }
}
