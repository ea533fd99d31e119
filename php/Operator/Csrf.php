<?php

declare(strict_types=1);

namespace Ephpm\Operator;

use Ephpm\Kv;

/**
 * The key browser's tokens against cross-site requests: a delete is a POST that carries
 * a token only a page of this store's status page could have shown. A token is
 * `TIME.HMAC-SHA256(secret, store, TIME)`, good for TTL seconds; the secret is 32 random
 * bytes kept in the store itself under SECRET_KEY (made by the first page that needs
 * it, with add(), so that every php-fpm worker, and every host of a Redis store, agrees
 * on it). Deleting that key makes every token shown so far useless.
 *
 * A request that says it comes from another site (`Origin` naming another host,
 * `Sec-Fetch-Site` other than same-origin) is refused even with a good token.
 */
final class Csrf
{
    public const SECRET_KEY = 'ephpm-status:csrf-secret';
    public const TTL = 3600;

    public function __construct(private Kv $kv, private string $store)
    {
    }

    public function token(): string
    {
        $t = (string) time();

        return $t . '.' . $this->mac($t);
    }

    /** @param array<string, mixed> $server $_SERVER */
    public function valid(mixed $token, array $server): bool
    {
        if (!is_string($token) || preg_match('/\A([0-9]{1,12})\.[0-9a-f]{64}\z/', $token, $m) !== 1
            || !self::sameOrigin($server)) {
            return false;
        }
        $age = time() - (int) $m[1];

        return $age >= -60 && $age <= self::TTL && hash_equals($m[1] . '.' . $this->mac($m[1]), $token);
    }

    private function mac(string $time): string
    {
        return hash_hmac('sha256', $this->store . "\0" . $time, $this->secret());
    }

    private function secret(): string
    {
        $secret = $this->kv->get(self::SECRET_KEY);
        if (!is_string($secret) || strlen($secret) !== 32) {
            $this->kv->add(self::SECRET_KEY, random_bytes(32));
            $secret = $this->kv->get(self::SECRET_KEY);
        }
        if (!is_string($secret) || strlen($secret) !== 32) {
            throw new \RuntimeException('ephpm: the key browser\'s secret (' . self::SECRET_KEY . ') cannot be kept in this store');
        }

        return $secret;
    }

    /** @param array<string, mixed> $server */
    private static function sameOrigin(array $server): bool
    {
        $site = $server['HTTP_SEC_FETCH_SITE'] ?? null;
        if ($site !== null && $site !== 'same-origin') {
            return false;
        }
        $origin = $server['HTTP_ORIGIN'] ?? null;
        if ($origin === null) {
            return true;
        }
        $host = parse_url((string) $origin, PHP_URL_HOST);
        $port = parse_url((string) $origin, PHP_URL_PORT);

        return is_string($host) && strcasecmp($host . ($port !== null ? ":$port" : ''), (string) ($server['HTTP_HOST'] ?? '')) === 0;
    }
}
