<?php

namespace Ephpm\Symfony\Command;

/**
 * Whether an shm:// store exists, found without opening it: `new Ephpm\Kv()` creates a
 * store that is not there, and a command run as the wrong user (root) would so create
 * that user's own store while looking. Its segment is
 * `<ephpm.shm_dir>/ephpm-<euid>/<store name>`.
 */
final class ShmSegment
{
    /** The segment file of the shm:// store `$dsn` (null: ephpm.dsn); null for another backend. */
    public static function path(?string $dsn): ?string
    {
        $dsn ??= (string) ini_get('ephpm.dsn');
        if ('' !== $dsn && !str_starts_with(strtolower($dsn), 'shm://')) {
            return null;
        }
        $name = substr($dsn, \strlen('shm://')) ?: (string) ini_get('ephpm.store_name');

        return sprintf('%s/ephpm-%d/%s', rtrim((string) ini_get('ephpm.shm_dir'), '/'), StoreOwner::euid(), $name);
    }

    /** Whether `$dsn` is an shm:// store that no process of this user has created yet. */
    public static function missing(?string $dsn): bool
    {
        return null !== ($path = self::path($dsn)) && !file_exists($path);
    }
}
