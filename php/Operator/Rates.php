<?php

declare(strict_types=1);

namespace Ephpm\Operator;

/**
 * Counters per second, over one of two time bases, and the page says which:
 * - since the previous look: the counters and time of the page this one refreshes,
 *   which the page carried in its own refresh link (`since`); nothing is kept on the
 *   server, every viewer has their own, and a forged `since` fools only its sender;
 * - else since the store began counting (Kv::stats()'s `age_seconds`: its segment was
 *   made, Redis: its server started): an average over the store's life.
 * A counter that went down since the previous look (the store was made anew) falls back
 * to since-start.
 */
final class Rates
{
    /** The counters a rate is given for (Kv::stats() names). */
    public const COUNTERS = ['hits', 'misses', 'evictions', 'expirations', 'lock_waits', 'lock_timeouts', 'stampedes_avoided', 'full_refusals'];

    /** @var array<string, array{0: float, 1: list<int>}> by store name: time, COUNTERS */
    private array $previous = [];

    /** @param ?string $since the `since` parameter of the refresh link */
    public function __construct(?string $since)
    {
        $json = $since === null ? false : base64_decode(strtr($since, '-_', '+/'), true);
        $data = $json === false ? null : json_decode($json, true, 8);
        if (!is_array($data)) {
            return;
        }
        foreach ($data as $store => $look) {
            if (is_array($look) && array_is_list($look) && count($look) === 2 && (is_int($look[0]) || is_float($look[0]))
                && is_array($look[1])
                && count($look[1]) === count(self::COUNTERS) && array_filter($look[1], 'is_int') === $look[1]) {
                $this->previous[(string) $store] = [(float) $look[0], array_values($look[1])];
            }
        }
    }

    /**
     * What a refresh link carries so that the next page measures from these snapshots.
     *
     * @param list<Snapshot> $snapshots
     */
    public static function since(array $snapshots): string
    {
        $looks = [];
        foreach ($snapshots as $s) {
            if ($s->error === null) {
                $looks[$s->store] = [$s->time, array_map($s->stat(...), self::COUNTERS)];
            }
        }

        return rtrim(strtr(base64_encode((string) json_encode($looks)), '+/', '-_'), '=');
    }

    /**
     * The rates of `$s`: the basis (`previous` or `start`), the seconds measured over,
     * and per counter the increase and the increase per second; null when there is no
     * time base (a store that does not know its age, a first look).
     *
     * @return ?array{basis: string, seconds: float, deltas: array<string, int>, perSecond: array<string, float>}
     */
    public function of(Snapshot $s): ?array
    {
        $now = array_map($s->stat(...), self::COUNTERS);
        $prev = $this->previous[$s->store] ?? null;
        if ($prev !== null && $s->time > $prev[0]) {
            $deltas = array_map(static fn (int $a, int $b): int => $a - $b, $now, $prev[1]);
            if (min($deltas) >= 0) {
                return self::rates('previous', $s->time - $prev[0], $deltas);
            }
        }
        $age = $s->stat('age_seconds');

        return $age > 0 ? self::rates('start', (float) $age, $now) : null;
    }

    /** @param list<int> $deltas in COUNTERS' order */
    private static function rates(string $basis, float $seconds, array $deltas): array
    {
        $deltas = array_combine(self::COUNTERS, $deltas);

        return [
            'basis' => $basis,
            'seconds' => $seconds,
            'deltas' => $deltas,
            'perSecond' => array_map(static fn (int $d): float => $d / $seconds, $deltas),
        ];
    }
}
