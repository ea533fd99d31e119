<?php

namespace Ephpm\WordPress;

/**
 * The object cache's settings, read once from the constants of wp-config.php:
 *
 * - `EPHPM_WP_DSN`: the store (any Ephpm\Kv DSN: `shm://`, `redis://…`, `redis-cluster://…`,
 *   `cluster://`); default null, the extension's `ephpm.dsn` (the host's shm store).
 * - `EPHPM_WP_SALT`: what tells this site's keys from every other site's on the store;
 *   default `WP_CACHE_KEY_SALT` when defined (the constant other object caches read), else
 *   a hash of the site's database: `DB_HOST`, `DB_NAME` and `$table_prefix`. Two installs
 *   that share a database and a table prefix are one site and share one cache; any other
 *   two never see each other's keys.
 * - `EPHPM_WP_MAXTTL`: the longest any entry lives, in seconds (0: no cap, the default);
 *   entries set to never expire get it too.
 * - `EPHPM_WP_DISABLED`: true leaves WordPress its own request-local cache.
 * - `EPHPM_WP_STALE_TRANSIENTS`: seconds a transient past its expiry is still served
 *   while one process refreshes it (stale-while-revalidate); 0, the default: off, an
 *   expired transient is a miss for everyone, as in core.
 */
final class Config
{
    public function __construct(
        public readonly ?string $dsn = null,
        public readonly string $salt = 'default',
        public readonly int $maxTtl = 0,
        public readonly bool $disabled = false,
        public readonly int $staleTransients = 0,
    ) {
    }

    public static function fromConstants(): self
    {
        return new self(
            dsn: defined('EPHPM_WP_DSN') && EPHPM_WP_DSN !== '' ? (string) EPHPM_WP_DSN : null,
            salt: self::salt(),
            maxTtl: defined('EPHPM_WP_MAXTTL') ? max(0, (int) EPHPM_WP_MAXTTL) : 0,
            disabled: defined('EPHPM_WP_DISABLED') && EPHPM_WP_DISABLED,
            staleTransients: defined('EPHPM_WP_STALE_TRANSIENTS') ? min(1000000, max(0, (int) EPHPM_WP_STALE_TRANSIENTS)) : 0,
        );
    }

    /**
     * The database, not ABSPATH: the cache holds copies of the database's rows, so the
     * database is what makes two installs one site or two. ABSPATH also changes with each
     * release directory of a symlinked deploy, which would empty the cache on each deploy.
     */
    private static function salt(): string
    {
        foreach (['EPHPM_WP_SALT', 'WP_CACHE_KEY_SALT'] as $name) {
            if (defined($name) && (string) constant($name) !== '') {
                return (string) constant($name);
            }
        }
        $db = [
            defined('DB_HOST') ? DB_HOST : '',
            defined('DB_NAME') ? DB_NAME : '',
            $GLOBALS['table_prefix'] ?? '',
        ];
        return substr(hash('sha256', implode("\0", $db)), 0, 16);
    }

    /**
     * The Kv prefix of this site: every key the cache writes starts with it, so flushing
     * the site (Kv::clear) removes only its keys. The salt is URL-encoded so that no salt
     * is a prefix of another's keys ("a" vs "a:b": "a:" never starts "a%3Ab:").
     */
    public function prefix(): string
    {
        return 'wpcache:' . rawurlencode($this->salt) . ':';
    }
}
