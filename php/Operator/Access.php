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
 *   by commas or whitespace (`127.0.0.1, 10.0.0.0/8, ::1`). Matched against REMOTE_ADDR
 *   only: X-Forwarded-For is whatever the client says it is. Every entry must be exactly
 *   an address or ADDRESS/BITS with BITS in range (0-32, 0-128; an IPv4-mapped IPv6 block
 *   96-128): one that is not (`10.0.0.0/`, `localhost`, `*`, `a;b`) turns both pages off
 *   with a 500 naming it, so that a typo never becomes a wider rule than was written.
 * - `EPHPM_STATUS_PASSWORD` / `'password'`: HTTP Basic's password (any user name), in
 *   clear or as a password_hash() hash.
 */
final class Access
{
    /** The first 12 bytes of an IPv4-mapped IPv6 address (::ffff:a.b.c.d). */
    private const MAPPED = "\0\0\0\0\0\0\0\0\0\0\xff\xff";

    /** @var list<array{0: string, 1: int}> networks: packed address, prefix bits */
    private array $networks = [];

    /** Why the settings cannot be used (the pages are then off), or null. */
    private ?string $error = null;

    /** @param list<string> $allow the allowlist's entries */
    public function __construct(array $allow, private ?string $password)
    {
        $bad = [];
        foreach ($allow as $entry) {
            $network = self::network($entry);
            if ($network === null) {
                $bad[] = '"' . addcslashes($entry, "\0..\37\"\\\177..\377") . '"';
            } else {
                $this->networks[] = $network;
            }
        }
        if ($bad !== []) {
            $this->error = 'EPHPM_STATUS_ALLOW: not an IPv4 or IPv6 address or ADDRESS/BITS block: '
                . implode(', ', $bad) . ' (entries are separated by commas or whitespace); '
                . 'the status page and the metrics are off until it is fixed';
        }
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
            preg_split('/[\s,]+/', $allow, -1, PREG_SPLIT_NO_EMPTY) ?: [],
            $password === null || $password === '' ? null : (string) $password,
        );
    }

    /**
     * An allowlist entry as [packed network, prefix bits], or null unless it is exactly
     * an address or ADDRESS/BITS with BITS in range. An IPv4-mapped IPv6 block becomes
     * the IPv4 block it is (clients' addresses are compared as IPv4, see `packed`); one
     * shorter than /96 would reach past IPv4, and is refused.
     *
     * @return ?array{0: string, 1: int}
     */
    private static function network(string $entry): ?array
    {
        if (preg_match('~\A([0-9A-Fa-f:.]+)(?:/([0-9]{1,3}))?\z~', $entry, $m) !== 1) {
            return null;
        }
        $net = @inet_pton($m[1]);
        if ($net === false) {
            return null;
        }
        $max = strlen($net) * 8;
        $bits = isset($m[2]) ? (int) $m[2] : $max;
        if ($bits > $max) {
            return null;
        }
        if ($max === 128 && str_starts_with($net, self::MAPPED)) {
            return $bits < 96 ? null : [substr($net, 12), $bits - 96];
        }

        return [$net, $bits];
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
     * The HTTP status that refuses this request (500 settings that cannot be used, 403
     * off or not allowed, 401 asking for the password), or null when it may see the page.
     *
     * @param array<string, mixed> $server $_SERVER
     */
    public function refusal(array $server): ?int
    {
        if ($this->error !== null) {
            return 500;
        }
        if ($this->networks === [] && $this->password === null) {
            return 403;
        }
        if ($this->networks !== [] && !$this->allows((string) ($server['REMOTE_ADDR'] ?? ''))) {
            return 403;
        }
        if ($this->password !== null && !$this->passwordMatches($server['PHP_AUTH_PW'] ?? null)) {
            return 401;
        }

        return null;
    }

    /**
     * Refuses the request if it must be (status, headers, a one-line body) and says
     * whether it did; the entry scripts stop then. Unusable settings are also said in
     * PHP's error log, where the operator looks.
     */
    public function refuse(): bool
    {
        $status = $this->refusal($_SERVER);
        if ($status === null) {
            return false;
        }
        http_response_code($status);
        header('Content-Type: text/plain; charset=utf-8');
        if ($status === 500) {
            error_log('ephpm: ' . $this->error);
            echo 'ephpm: ', $this->error, "\n";
        } elseif ($status === 401) {
            header('WWW-Authenticate: Basic realm="ephpm status", charset="UTF-8"');
            echo "ephpm: a password is needed\n";
        } elseif ($this->networks === [] && $this->password === null) {
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
        foreach ($this->networks as [$net, $bits]) {
            if (strlen($net) === strlen($ip) && self::samePrefix($ip, $net, $bits)) {
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
        if (strlen($p) === 16 && str_starts_with($p, self::MAPPED)) {
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
