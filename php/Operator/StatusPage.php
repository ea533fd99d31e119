<?php

declare(strict_types=1);

namespace Ephpm\Operator;

/**
 * The status page, in the spirit of APCu's apc.php: one self-contained HTML document
 * (inline CSS and SVG, no script, no external asset) from a Snapshot. Every figure
 * carries its exact value in a `data-value` attribute next to the readable text, so that
 * a test or a scraper reads numbers, not formatting.
 */
final class StatusPage
{
    /** Prefixes shown; the rest are summed in one row. */
    public const PREFIXES_SHOWN = 20;

    /**
     * The page's headers, over Headers::send()'s: its type, and a CSP that allows only
     * its inline CSS and data: images (still nothing from outside, and no framing).
     */
    public static function headers(): void
    {
        header('Content-Type: text/html; charset=utf-8');
        header('Content-Security-Policy: ' . Headers::CSP . "; style-src 'unsafe-inline'; img-src data:");
    }

    public function render(Snapshot $s): string
    {
        $st = $s->stats;
        $size = (int) $st['memory_size'];
        $used = (int) $st['memory_used'];
        $rate = $s->hitRate();
        $backend = (string) $st['backend'];

        $counters = '';
        foreach (['entries', 'hits', 'misses', 'evictions', 'expirations', 'repairs', 'resets', 'shards', 'shards_locked'] as $name) {
            $counters .= '<tr><th>' . $name . '</th>' . self::num($name, (int) ($st[$name] ?? 0)) . '</tr>';
        }

        return '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            . '<meta name="viewport" content="width=device-width, initial-scale=1">'
            . '<link rel="icon" href="data:,"><title>ephpm status</title><style>' . self::CSS . '</style></head><body>'
            . '<header><h1>ephpm</h1><p class="backend" data-metric="backend">' . self::e($backend) . '</p>'
            . '<p class="meta">ephpm ' . self::e((string) phpversion('ephpm')) . ' · PHP ' . PHP_VERSION
            . ' · ' . self::e(gmdate('Y-m-d H:i:s')) . ' UTC</p></header><main>'
            . '<section class="card"><h2>Memory</h2>' . self::gauge($used, $size)
            . '<table><tr><th>used</th>' . self::bytes('memory_used', $used) . '</tr>'
            . '<tr><th>free</th>' . self::bytes('memory_free', (int) $st['memory_free']) . '</tr>'
            . '<tr><th>size</th>' . self::bytes('memory_size', $size) . '</tr></table></section>'
            . '<section class="card"><h2>Hit rate</h2>' . self::rate($rate)
            . '<table>' . $counters . '</table></section>'
            . '<section class="card"><h2>Held now</h2><table>'
            . '<tr><th>locks held</th>' . self::num('locks_held', $s->locksHeld) . '</tr>'
            . '<tr><th>sessions</th>' . self::num('sessions', $s->sessions) . '</tr>'
            . '<tr><th>keys walked</th>' . self::num('walked', $s->walked) . '</tr>'
            . (isset($st['resp_server']) ? '<tr><th>Redis clients (ephpm-resp)</th><td data-metric="resp_server">'
                . self::e((string) $st['resp_server']) . '</td></tr>' : '')
            . '</table>'
            . ($s->truncated ? '<p class="note" data-metric="truncated">The walk stopped at ' . $s->walkLimit
                . ' keys: prefixes, locks and sessions are those of the keys walked.</p>' : '')
            . '</section>'
            . '<section class="card wide"><h2>Entries by prefix</h2>' . $this->prefixes($s) . '</section>'
            . '<section class="card wide"><h2>Locks held</h2>' . $this->locks($s) . '</section>'
            . '</main></body></html>';
    }

    private function prefixes(Snapshot $s): string
    {
        if ($s->prefixes === []) {
            return '<p class="empty">No entries.</p>';
        }
        $max = max(array_column($s->prefixes, 'keys'));
        $rows = '';
        $shown = 0;
        $other = ['keys' => 0, 'bytes' => 0, 'prefixes' => 0];
        foreach ($s->prefixes as $prefix => $p) {
            if ($shown++ >= self::PREFIXES_SHOWN) {
                $other['keys'] += $p['keys'];
                $other['bytes'] += $p['bytes'];
                $other['prefixes']++;
                continue;
            }
            $label = $prefix === '' ? '<em>(no prefix)</em>' : self::e((string) $prefix) . ':';
            $width = round(100 * $p['keys'] / $max, 1);
            $rows .= '<tr data-prefix="' . self::e((string) $prefix) . '"><td>' . $label . '</td>'
                . self::num('keys', $p['keys']) . self::bytes('bytes', $p['bytes'])
                . '<td class="bar"><svg viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true">'
                . '<rect width="' . $width . '" height="8" rx="2"/></svg></td></tr>';
        }
        if ($other['prefixes'] > 0) {
            $rows .= '<tr class="other"><td>' . $other['prefixes'] . ' more</td>' . self::num('keys', $other['keys'])
                . self::bytes('bytes', $other['bytes']) . '<td></td></tr>';
        }

        return '<table class="list"><tr><th>prefix</th><th>keys</th><th>bytes</th><th></th></tr>' . $rows . '</table>';
    }

    private function locks(Snapshot $s): string
    {
        if ($s->locks === []) {
            return '<p class="empty">No lock is held.</p>';
        }
        $rows = '';
        foreach ($s->locks as $l) {
            $ttl = $l['ttl'] === null ? '—' : sprintf('%.1f s', $l['ttl']);
            $rows .= '<tr data-lock="' . self::e($l['name']) . '"><td>' . self::e($l['name']) . '</td>'
                . '<td>' . $ttl . '</td>' . self::num('fence', $l['fence']) . '</tr>';
        }
        $more = $s->locksHeld > count($s->locks)
            ? '<p class="note">' . ($s->locksHeld - count($s->locks)) . ' more not listed.</p>' : '';

        return '<table class="list"><tr><th>name</th><th>TTL left</th><th>fence</th></tr>' . $rows . '</table>' . $more;
    }

    /** A ring filled to used/size. */
    private static function gauge(int $used, int $size): string
    {
        $share = $size > 0 ? min(1.0, $used / $size) : 0.0;
        $circumference = 2 * M_PI * 40;
        $dash = round($share * $circumference, 2);
        $level = $share > 0.9 ? 'high' : ($share > 0.7 ? 'mid' : 'low');

        return '<svg class="gauge ' . $level . '" viewBox="0 0 100 100" role="img" aria-label="memory used">'
            . '<circle cx="50" cy="50" r="40" class="track"/>'
            . '<circle cx="50" cy="50" r="40" class="fill" stroke-dasharray="' . $dash . ' ' . round($circumference, 2)
            . '" transform="rotate(-90 50 50)"/>'
            . '<text x="50" y="56" text-anchor="middle" data-metric="memory_share">' . sprintf('%.1f%%', 100 * $share)
            . '</text></svg>';
    }

    private static function rate(?float $rate): string
    {
        $text = $rate === null ? 'no lookups yet' : sprintf('%.1f%%', 100 * $rate);
        $width = $rate === null ? 0 : round(100 * $rate, 1);

        return '<p class="rate" data-metric="hit_rate" data-value="' . ($rate === null ? '' : round($rate, 6)) . '">'
            . $text . '</p><svg class="ratebar" viewBox="0 0 100 6" preserveAspectRatio="none" aria-hidden="true">'
            . '<rect width="100" height="6" class="track"/><rect width="' . $width . '" height="6" class="fill"/></svg>';
    }

    private static function num(string $metric, int $n): string
    {
        return '<td class="n" data-metric="' . $metric . '" data-value="' . $n . '">' . number_format($n) . '</td>';
    }

    private static function bytes(string $metric, int $n): string
    {
        $units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
        $i = 0;
        $x = (float) $n;
        while ($x >= 1024 && $i < count($units) - 1) {
            $x /= 1024;
            $i++;
        }
        $text = $i === 0 ? $n . ' B' : sprintf('%.1f %s', $x, $units[$i]);

        return '<td class="n" data-metric="' . $metric . '" data-value="' . $n . '">' . $text . '</td>';
    }

    private static function e(string $s): string
    {
        return htmlspecialchars($s, ENT_QUOTES | ENT_SUBSTITUTE, 'UTF-8');
    }

    private const CSS = <<<'CSS'
        :root{--bg:#f5f6f8;--card:#fff;--ink:#1d2330;--mute:#6b7385;--line:#e3e6ec;--accent:#3461c1;--ok:#2f9e62;--mid:#d08a1f;--high:#c8412f}
        *{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--ink)}
        header{padding:18px 28px;background:var(--ink);color:#fff}header h1{margin:0;font-size:22px;letter-spacing:.5px}
        header p{margin:4px 0 0}.backend{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}.meta{color:#aab2c5;font-size:12px}
        main{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:16px;padding:20px 28px}
        .card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:14px 18px}.wide{grid-column:1/-1}
        h2{margin:0 0 10px;font-size:15px;color:var(--mute);font-weight:600;text-transform:uppercase;letter-spacing:.6px}
        table{width:100%;border-collapse:collapse}th,td{padding:4px 6px;text-align:left;border-bottom:1px solid var(--line)}
        th{font-weight:500;color:var(--mute)}td.n{text-align:right;font-variant-numeric:tabular-nums}
        .list th{font-size:12px;text-transform:uppercase}.list td:first-child{font-family:ui-monospace,Menlo,Consolas,monospace}
        .gauge{display:block;width:150px;margin:0 auto 8px}.gauge circle{fill:none;stroke-width:12}.gauge .track{stroke:var(--line)}
        .gauge.low .fill{stroke:var(--ok)}.gauge.mid .fill{stroke:var(--mid)}.gauge.high .fill{stroke:var(--high)}
        .gauge text{font-size:16px;font-weight:600;fill:var(--ink)}
        .rate{font-size:32px;font-weight:600;margin:6px 0}.ratebar{width:100%;height:8px;margin-bottom:10px}
        .ratebar .track{fill:var(--line)}.ratebar .fill{fill:var(--ok)}
        td.bar{width:40%}td.bar svg{width:100%;height:10px}td.bar rect{fill:var(--accent)}
        .note,.empty{color:var(--mute);font-size:13px}
        CSS;
}
