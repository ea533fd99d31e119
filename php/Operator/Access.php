<?php

declare(strict_types=1);

namespace Ephpm\Operator;

/**
 * Who may see the status page and the metrics: nobody, unless an allowlist of client
 * addresses or a password is configured. With both, a client needs both (the allowlist
 * narrows who may even try the password).
 *
 * Settings come from the environment (php-fpm: `env[EPHPM_STATUS_ALLOW] = ...` in the
 * pool) or, when those are unset, from an array file such as php/status.conf.php:
 * - `EPHPM_STATUS_ALLOW` / `'allow'`: addresses and CIDR blocks, IPv4 or IPv6, separated
 *   by commas or spaces (`127.0.0.1, 10.0.0.0/8, ::1`). Matched against REMOTE_ADDR only:
 *   X-Forwarded-For is whatever the client says it is.
 * - `EPHPM_STATUS_PASSWORD` / `'password'`: HTTP Basic's password (any user name), in
 *   clear or as a password_hash() hash.
 */
final class Access
{
    /** @param list<string> $allow */
    public function __construct(private array $allow, private ?string $password)
    {
    }

    /** The settings of the environment, else of `$file` (an array file) when it exists. */
    public static function configured(?string $file = null): self
    {
        $conf = $file !== null && is_file($file) ? require $file : [];
        $conf = is_array($conf) ? $conf : [];
        $allow = self::setting('EPHPM_STATUS_ALLOW') ?? $conf['allow'] ?? '';
        $allow = is_array($allow) ? implode(',', $allow) : (string) $allow;
        $password = self::setting('EPHPM_STATUS_PASSWORD') ?? $conf['password'] ?? null;

        return new self(
            array_values(array_filter(preg_split('/[\s,]+/', $allow) ?: [], 'strlen')),
            $password === null || $password === '' ? null : (string) $password,
        );
    }

    /** A setting from the environment (FPM's env[...] reaches getenv() and $_SERVER). */
    private static function setting(string $name): ?string
    {
        $v = getenv($name);
        if ($v === false) {
            $v = $_SERVER[$name] ?? null;
        }

        return is_string($v) && $v !== '' ? $v : null;
    }

    /**
     * The HTTP status that refuses this request (403 off or not allowed, 401 asking for
     * the password), or null when it may see the page.
     *
     * @param array<string, mixed> $server $_SERVER
     */
    public function refusal(array $server): ?int
    {
        if ($this->allow === [] && $this->password === null) {
            return 403;
        }
        if ($this->allow !== [] && !$this->allows((string) ($server['REMOTE_ADDR'] ?? ''))) {
            return 403;
        }
        if ($this->password !== null && !$this->passwordMatches($server['PHP_AUTH_PW'] ?? null)) {
            return 401;
        }

        return null;
    }

    /**
     * Refuses the request if it must be (status, headers, a one-line body) and says
     * whether it did; the entry scripts stop then.
     */
    public function refuse(): bool
    {
        $status = $this->refusal($_SERVER);
        if ($status === null) {
            return false;
        }
        http_response_code($status);
        header('Content-Type: text/plain; charset=utf-8');
        header('Cache-Control: no-store');
        if ($status === 401) {
            header('WWW-Authenticate: Basic realm="ephpm status", charset="UTF-8"');
            echo "ephpm: a password is needed\n";
        } elseif ($this->allow === [] && $this->password === null) {
            echo "ephpm: off; set EPHPM_STATUS_ALLOW or EPHPM_STATUS_PASSWORD to turn it on\n";
        } else {
            echo "ephpm: this address is not allowed\n";
        }

        return true;
    }

    public function allows(string $ip): bool
    {
        $ip = self::packed($ip);
        if ($ip === null) {
            return false;
        }
        foreach ($this->allow as $entry) {
            [$net, $bits] = str_contains($entry, '/') ? explode('/', $entry, 2) : [$entry, null];
            $net = self::packed($net);
            if ($net === null || strlen($net) !== strlen($ip)) {
                continue;
            }
            $bits = $bits === null ? strlen($net) * 8 : (int) $bits;
            if (self::samePrefix($ip, $net, max(0, min($bits, strlen($net) * 8)))) {
                return true;
            }
        }

        return false;
    }

    /** An address as bytes; an IPv4-mapped IPv6 address (::ffff:a.b.c.d) as its IPv4. */
    private static function packed(string $ip): ?string
    {
        $p = @inet_pton(trim($ip, '[] '));
        if ($p === false) {
            return null;
        }
        if (strlen($p) === 16 && str_starts_with($p, str_repeat("\0", 10) . "\xff\xff")) {
            return substr($p, 12);
        }

        return $p;
    }

    private static function samePrefix(string $a, string $b, int $bits): bool
    {
        $bytes = intdiv($bits, 8);
        if (substr($a, 0, $bytes) !== substr($b, 0, $bytes)) {
            return false;
        }
        $rest = $bits % 8;
        if ($rest === 0) {
            return true;
        }
        $mask = (0xff << (8 - $rest)) & 0xff;

        return (ord($a[$bytes]) & $mask) === (ord($b[$bytes]) & $mask);
    }

    private function passwordMatches(mixed $given): bool
    {
        if (!is_string($given) || $this->password === null) {
            return false;
        }
        if (password_get_info($this->password)['algo'] !== null) {
            return password_verify($given, $this->password);
        }

        return hash_equals($this->password, $given);
    }
}
