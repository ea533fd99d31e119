<?php

namespace Ephpm\Symfony\Command;

use Symfony\Component\Console\Style\SymfonyStyle;

/**
 * Whose stores a command acts on. An shm:// store belongs to one Unix user
 * (/dev/shm/ephpm-<euid>/): a console command run as root (or a deploy user) opens that
 * user's store, not the one php-fpm serves, and would otherwise say nothing about it.
 */
final class StoreOwner
{
    /**
     * Says which user's stores the command acts on, and warns when that is not the web
     * server's user while one of $dsns is an shm:// store.
     *
     * @param array<string, ?string> $dsns The stores acted on, name => DSN (null: ephpm.dsn).
     */
    public static function introduce(SymfonyStyle $io, array $dsns, string $webUser, string $command): void
    {
        $uid = self::euid();
        $user = self::name($uid);
        $perUser = array_keys(array_filter($dsns, static fn (?string $dsn) => self::isShm($dsn)));
        $io->text(sprintf('Acting as Unix user <info>%s</info> (uid %d): its shm:// stores are in /dev/shm/ephpm-%d/.', $user, $uid, $uid));
        if (!$perUser || $user === $webUser) {
            return;
        }
        $webUid = self::uid($webUser);
        $io->warning(sprintf(
            'php-fpm runs as %s (ephpm.web_user), this command as %s: the shm:// store%s "%s" used here %s %s\'s, not the one%s php-fpm serves%s. To act on those: runuser -u %s -- php bin/console %s',
            $webUser, $user, \count($perUser) > 1 ? 's' : '', implode('", "', $perUser), \count($perUser) > 1 ? 'are' : 'is', $user,
            \count($perUser) > 1 ? 's' : '', null === $webUid ? '' : sprintf(' (in /dev/shm/ephpm-%d/)', $webUid), $webUser, $command,
        ));
    }

    private static function isShm(?string $dsn): bool
    {
        $dsn ??= (string) ini_get('ephpm.dsn');

        return '' === $dsn || str_starts_with(strtolower($dsn), 'shm://');
    }

    /** The effective uid (ext-posix is optional: /proc says it too). */
    public static function euid(): int
    {
        if (\function_exists('posix_geteuid')) {
            return posix_geteuid();
        }
        // "Uid:\treal\teffective\tsaved\tfs"
        preg_match('/^Uid:\s+\d+\s+(\d+)/m', (string) @file_get_contents('/proc/self/status'), $m);

        return (int) ($m[1] ?? -1);
    }

    private static function name(int $uid): string
    {
        if (\function_exists('posix_getpwuid')) {
            return posix_getpwuid($uid)['name'] ?? (string) $uid;
        }
        foreach (self::passwd() as $entry) {
            if ((int) $entry[2] === $uid) {
                return $entry[0];
            }
        }

        return (string) $uid;
    }

    private static function uid(string $name): ?int
    {
        if (\function_exists('posix_getpwnam')) {
            $entry = posix_getpwnam($name);

            return false === $entry ? null : $entry['uid'];
        }
        foreach (self::passwd() as $entry) {
            if ($entry[0] === $name) {
                return (int) $entry[2];
            }
        }

        return null;
    }

    /** @return list<list<string>> /etc/passwd's entries, for PHP builds without ext-posix. */
    private static function passwd(): array
    {
        return array_map(static fn (string $line) => explode(':', $line), file('/etc/passwd', FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) ?: []);
    }
}
