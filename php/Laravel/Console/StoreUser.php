<?php

namespace Ephpm\Laravel\Console;

/**
 * Whose store a command would open. An shm:// store (also a cluster:// node's) belongs to
 * one Unix user: `<ephpm.shm_dir>/ephpm-<euid>/<name>`. A command run as root or a
 * deploy user opens that user's store, not the one php-fpm serves, and `new Ephpm\Kv()`
 * would create it if it is not there. So a command asks here first, and never constructs
 * a Kv for a store that is not php-fpm's or does not exist.
 */
final class StoreUser
{
    /** @param string $webUser The Unix user php-fpm runs as (config ephpm.web_user). */
    public function __construct(private string $webUser)
    {
    }

    /**
     * Why this process must not act on the store `$dsn` (null: ephpm.dsn): it is one
     * user's, and this process runs as another than php-fpm. Null when it may.
     */
    public function wrongUser(?string $dsn, string $command): ?string
    {
        if (!self::perUser($dsn)) {
            return null;
        }
        $uid = self::euid();
        $user = self::nameOf($uid);
        if ($user !== $this->webUser) {
            $web = self::uidOf($this->webUser);
            return sprintf(
                'php-fpm runs as %s (ephpm.web_user), this command as %s: the store %s here would be %s\'s (in %s), not the one php-fpm serves%s. Nothing was done. To act on php-fpm\'s: runuser -u %s -- php artisan %s',
                $this->webUser, $user, self::shown($dsn), $user, self::userDir($uid),
                $web === null ? '' : sprintf(' (in %s)', self::userDir($web)), $this->webUser, $command,
            );
        }
        return null;
    }

    /** Why there is nothing to act on: the shm:// store `$dsn` was never made. Null when it exists (or is not shm://). */
    public function missing(?string $dsn): ?string
    {
        if (($segment = self::segment($dsn)) !== null && !is_file($segment)) {
            return sprintf('The store %s does not exist (no %s): nothing to do, and none was created.', self::shown($dsn), $segment);
        }
        return null;
    }

    /** Whether the store is one Unix user's on this host (shm://, cluster://) rather than a server's. */
    private static function perUser(?string $dsn): bool
    {
        $dsn = strtolower($dsn ?? (string) ini_get('ephpm.dsn'));
        return $dsn === '' || str_starts_with($dsn, 'shm://') || str_starts_with($dsn, 'cluster://');
    }

    /** The segment file of an shm:// store; null for others (a cluster node's is its own). */
    private static function segment(?string $dsn): ?string
    {
        $dsn ??= (string) ini_get('ephpm.dsn');
        if ($dsn !== '' && !str_starts_with(strtolower($dsn), 'shm://')) {
            return null;
        }
        $name = $dsn === '' ? '' : substr($dsn, strlen('shm://'));
        $name = $name === '' ? (string) ini_get('ephpm.store_name') : $name;
        return self::userDir(self::euid()) . '/' . $name;
    }

    /** The effective uid (ext-posix is optional: /proc says it too, "Uid: real effective ..."). */
    private static function euid(): int
    {
        if (function_exists('posix_geteuid')) {
            return posix_geteuid();
        }
        preg_match('/^Uid:\s+\d+\s+(\d+)/m', (string) @file_get_contents('/proc/self/status'), $m);
        return (int) ($m[1] ?? -1);
    }

    private static function nameOf(int $uid): string
    {
        if (function_exists('posix_getpwuid')) {
            return posix_getpwuid($uid)['name'] ?? (string) $uid;
        }
        return self::passwd(static fn (array $e) => (int) $e[2] === $uid)[0] ?? (string) $uid;
    }

    private static function uidOf(string $name): ?int
    {
        if (function_exists('posix_getpwnam')) {
            return ($entry = posix_getpwnam($name)) === false ? null : $entry['uid'];
        }
        return ($entry = self::passwd(static fn (array $e) => $e[0] === $name)) === null ? null : (int) $entry[2];
    }

    /** @return list<string>|null The first /etc/passwd entry `$match` accepts (without ext-posix). */
    private static function passwd(\Closure $match): ?array
    {
        foreach (file('/etc/passwd', FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) ?: [] as $line) {
            $entry = explode(':', $line);
            if (count($entry) > 2 && $match($entry)) {
                return $entry;
            }
        }
        return null;
    }

    private static function userDir(int $uid): string
    {
        return rtrim((string) ini_get('ephpm.shm_dir'), '/') . '/ephpm-' . $uid;
    }

    private static function shown(?string $dsn): string
    {
        return $dsn === null || $dsn === '' ? sprintf('"%s" (ephpm.dsn)', ini_get('ephpm.dsn') ?: 'shm://') : sprintf('"%s"', $dsn);
    }
}
