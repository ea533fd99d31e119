<?php

namespace Ephpm\WordPress;

use Ephpm\Kv;

/**
 * What the companion plugin and `wp ephpm` report and do: whether the drop-in is ours
 * and in place, whether the store answers, its counters, and flushing this site's cache.
 * No WordPress function is called here but through `$GLOBALS['wp_object_cache']`.
 */
final class Status
{
    public function __construct(private Config $config, private DropIn $dropIn)
    {
    }

    /** This site's: wp-config.php's constants, the drop-in beside this file, WP_CONTENT_DIR. */
    public static function forSite(): self
    {
        $contentDir = defined('WP_CONTENT_DIR') ? (string) WP_CONTENT_DIR : (defined('ABSPATH') ? ABSPATH . 'wp-content' : getcwd() . '/wp-content');
        return new self(Config::fromConstants(), new DropIn(__DIR__ . '/object-cache.php', $contentDir));
    }

    public function dropIn(): DropIn
    {
        return $this->dropIn;
    }

    public function config(): Config
    {
        return $this->config;
    }

    /** The DSN as configured, with any password masked; null: the extension's ephpm.dsn. */
    public function dsn(): string
    {
        $dsn = $this->config->dsn ?? ((string) ini_get('ephpm.dsn') ?: 'shm://');
        return self::maskDsn($dsn) . ($this->config->dsn === null ? ' (ephpm.dsn)' : '');
    }

    /** `redis://user:secret@host` → `redis://user:****@host`; `?password=…` likewise. */
    public static function maskDsn(string $dsn): string
    {
        $dsn = preg_replace_callback('~^([a-z][a-z0-9+.-]*://)([^@/]*)@~i', static function (array $m): string {
            $user = strstr($m[2], ':', true);
            return $m[1] . ($user === false ? '****' : $user . ':****') . '@';
        }, $dsn) ?? $dsn;
        return preg_replace('~([?&](?:pass|password|secret|token)=)[^&]*~i', '$1****', $dsn) ?? $dsn;
    }

    /** null when the store takes a write and gives it back; else why not. */
    public function storeProblem(): ?string
    {
        if ($this->config->disabled) {
            return 'EPHPM_WP_DISABLED is set';
        }
        if (!class_exists(Kv::class)) {
            return 'the ephpm extension is not loaded';
        }
        try {
            $kv = new Kv($this->config->dsn, $this->config->prefix());
            $token = bin2hex(random_bytes(8));
            $kv->set('health:' . $token, $token, 60);
            $answer = $kv->get('health:' . $token);
            $kv->delete('health:' . $token);
            return $answer === $token ? null : 'the store did not give back what was written';
        } catch (\Throwable $e) {
            return $e->getMessage();
        }
    }

    /** The store's counters (Kv::stats()), or null when it cannot be read. */
    public function storeStats(): ?array
    {
        try {
            return class_exists(Kv::class) ? (new Kv($this->config->dsn))->stats() : null;
        } catch (\Throwable) {
            return null;
        }
    }

    /** This request's object cache, when it is ours. */
    public function cache(): ?ObjectCache
    {
        $cache = $GLOBALS['wp_object_cache'] ?? null;
        return $cache instanceof ObjectCache ? $cache : null;
    }

    /** Whether the drop-in is ours, in place and serving from the store in this request. */
    public function serving(): bool
    {
        return $this->dropIn->state() === DropIn::OURS && $this->cache()?->isPersistent() === true;
    }

    /** A hit ratio for people: "93.1 % (27 hits, 2 misses)". */
    public static function ratio(int $hits, int $misses): string
    {
        $all = $hits + $misses;
        return ($all === 0 ? 'n/a' : number_format(100 * $hits / $all, 1) . ' %') . " ($hits hits, $misses misses)";
    }

    /**
     * Everything, label => value, in the order a person reads it.
     *
     * @return array<string, string>
     */
    public function report(): array
    {
        $state = $this->dropIn->state();
        $problem = $this->storeProblem();
        $cache = $this->cache();
        $report = [
            'drop-in' => $state . ' (' . $this->dropIn->path() . ')',
            'extension' => class_exists(Kv::class) ? 'ephpm ' . phpversion('ephpm') : 'not loaded',
            'store' => $this->dsn(),
            'store answers' => $problem === null ? 'yes' : 'no: ' . $problem,
            'key prefix' => $this->config->prefix(),
            'stale transients' => $this->config->staleTransients > 0 ? $this->config->staleTransients . ' s' : 'off',
            'max TTL' => $this->config->maxTtl > 0 ? $this->config->maxTtl . ' s' : 'none',
        ];
        if ($cache !== null) {
            $report['this request'] = self::ratio($cache->cache_hits, $cache->cache_misses);
        }
        $stats = $problem === null ? $this->storeStats() : null;
        if ($stats !== null) {
            $report['store hit ratio'] = self::ratio((int) ($stats['hits'] ?? 0), (int) ($stats['misses'] ?? 0));
            $report['store entries'] = (string) ($stats['entries'] ?? '?');
            if (isset($stats['memory_used'], $stats['memory_size'])) {
                $report['store memory'] = sprintf('%.1f of %.1f MiB', $stats['memory_used'] / 1048576, $stats['memory_size'] / 1048576);
            }
            $report['store evictions'] = (string) ($stats['evictions'] ?? '?');
        }
        return $report;
    }

    /**
     * Empties this site's cache (every blog and group) or one group of it, in the store,
     * through this request's cache when it is ours, else through a cache made for it.
     */
    public function flush(?string $group = null): bool
    {
        $cache = $this->cache() ?? new ObjectCache($this->config);
        return $group === null ? $cache->flush() : $cache->flush_group($group);
    }
}
