<?php

declare(strict_types=1);

namespace Ephpm\Operator;

/**
 * The status page's pieces of HTML. Every figure is a `<td>` (or element) with its exact
 * value in `data-value` beside the readable text, and the name of what it is in
 * `data-metric`, so that a test or a scraper reads numbers, not formatting.
 */
final class Html
{
    public static function e(string $s): string
    {
        return htmlspecialchars($s, ENT_QUOTES | ENT_SUBSTITUTE, 'UTF-8');
    }

    /** Bytes (a key, a prefix) as escaped text (Escape::text), HTML-escaped on top. */
    public static function key(string $bytes): string
    {
        return self::e(Escape::text($bytes));
    }

    public static function card(string $title, string $body, string $class = 'card'): string
    {
        return '<section class="' . $class . '"><h3>' . self::e($title) . '</h3>' . $body . '</section>';
    }

    public static function num(string $metric, int $n): string
    {
        return '<td class="n" data-metric="' . $metric . '" data-value="' . $n . '">' . number_format($n) . '</td>';
    }

    public static function bytes(string $metric, int $n): string
    {
        return '<td class="n" data-metric="' . $metric . '" data-value="' . $n . '">' . self::size($n) . '</td>';
    }

    /** What a backend does not count: said, with no data-value to mistake for a 0. */
    public static function notCounted(string $metric): string
    {
        return '<td class="n none" data-metric="' . $metric . '" data-value="">not counted</td>';
    }

    public static function size(int $n): string
    {
        $units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
        $i = 0;
        $x = (float) $n;
        while ($x >= 1024 && $i < count($units) - 1) {
            $x /= 1024;
            $i++;
        }

        return $i === 0 ? $n . ' B' : sprintf('%.1f %s', $x, $units[$i]);
    }

    /** A duration for people: "3 d 4 h", "2 h 5 min", "12 min 3 s", "45 s". */
    public static function duration(int $seconds): string
    {
        $d = intdiv($seconds, 86400);
        $h = intdiv($seconds % 86400, 3600);
        $m = intdiv($seconds % 3600, 60);
        $s = $seconds % 60;

        return match (true) {
            $d > 0 => "$d d $h h",
            $h > 0 => "$h h $m min",
            $m > 0 => "$m min $s s",
            default => "$s s",
        };
    }

    /** A TTL as KvIterator gives it: seconds left, or null for none. */
    public static function ttl(?float $ttl): string
    {
        return $ttl === null ? '—' : sprintf('%.1f s', $ttl);
    }
}
