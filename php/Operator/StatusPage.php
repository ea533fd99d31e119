<?php

declare(strict_types=1);

namespace Ephpm\Operator;

use Ephpm\Operator\Section\Activity;
use Ephpm\Operator\Section\Held;
use Ephpm\Operator\Section\Keys;
use Ephpm\Operator\Section\Largest;
use Ephpm\Operator\Section\Members;
use Ephpm\Operator\Section\Memory;
use Ephpm\Operator\Section\Prefixes;
use Ephpm\Operator\Section\Shards;

/**
 * The status page, in the spirit of APCu's apc.php: one self-contained HTML document
 * (inline CSS and SVG, no script, no external asset) of one or more stores' Snapshots,
 * each shown by the Sections of sections(), then the settings. `?refresh=N` reloads it
 * every N seconds (REFRESH_MIN to REFRESH_MAX); its reload, like the "measure from here"
 * link, carries this look's counters, so that the next page's rates are since this one.
 */
final class StatusPage
{
    public const REFRESH_MIN = 2;
    public const REFRESH_MAX = 3600;

    /** @param array<string, mixed> $get the request's query ($_GET) */
    public function __construct(private array $get)
    {
    }

    /**
     * The page's headers, over Headers::send()'s: its type, and a CSP that allows only
     * its inline CSS and data: images, and forms that post to the page itself (the key
     * browser's). Still nothing from outside, and no framing.
     */
    public static function headers(): void
    {
        header('Content-Type: text/html; charset=utf-8');
        header('Content-Security-Policy: ' . str_replace("form-action 'none'", "form-action 'self'", Headers::CSP)
            . "; style-src 'unsafe-inline'; img-src data:");
    }

    /** @return list<Section> what each store shows, in order */
    private function sections(): array
    {
        return [
            new Memory(),
            new Activity(new Rates(is_string($this->get['since'] ?? null) ? $this->get['since'] : null)),
            new Held(),
            new Members(),
            new Shards(),
            new Largest(),
            new Prefixes(),
            Keys::fromQuery($this->get),
        ];
    }

    /** @param list<Snapshot> $stores */
    public function render(array $stores): string
    {
        $refresh = $this->refresh();
        $since = Rates::since($stores);
        $keep = array_intersect_key($this->get, ['store' => 1, 'find' => 1]);
        $reload = '?' . http_build_query($keep + ['refresh' => $refresh, 'since' => $since]);
        $body = '';
        $sections = $this->sections();
        foreach ($stores as $i => $s) {
            $body .= '<section class="store" data-store-index="' . $i . '" data-store="' . Html::e($s->store) . '">'
                . '<h2>' . Html::e($s->store) . '</h2>';
            if ($s->error !== null) {
                $body .= '<p class="error" data-metric="error">' . Html::key($s->error) . '</p></section>';
                continue;
            }
            $body .= '<p class="backend" data-metric="backend">' . Html::e((string) $s->stats['backend']) . '</p><div class="cards">';
            foreach ($sections as $section) {
                $body .= $section->html($s, $i);
            }
            $body .= '</div></section>';
        }

        return '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            . '<meta name="viewport" content="width=device-width, initial-scale=1">'
            . ($refresh === null ? '' : '<meta http-equiv="refresh" content="' . $refresh . '; url=' . Html::e($reload) . '">')
            . '<link rel="icon" href="data:,"><title>ephpm status</title><style>' . self::CSS . '</style></head><body>'
            . '<header><h1>ephpm</h1>'
            . '<p class="meta">ephpm ' . Html::e((string) phpversion('ephpm')) . ' · PHP ' . PHP_VERSION
            . ' · ' . Html::e(gmdate('Y-m-d H:i:s')) . ' UTC · <span data-metric="stores" data-value="' . count($stores) . '">'
            . count($stores) . (count($stores) === 1 ? ' store' : ' stores') . '</span></p>'
            . '<p class="meta" data-metric="refresh" data-value="' . ($refresh ?? '') . '">'
            . ($refresh === null ? 'Not refreshing.' : 'Refreshing every ' . $refresh . ' s.')
            . ' <a href="' . Html::e($reload) . '" data-link="measure">measure rates from this look</a>'
            . ' · refresh every <a href="?refresh=5">5 s</a>, <a href="?refresh=30">30 s</a>, <a href="?">never</a></p>'
            . '</header><main>' . $body . Settings::html() . '</main></body></html>';
    }

    /** `?refresh=N` bounded to REFRESH_MIN..REFRESH_MAX; null when absent or not a number. */
    private function refresh(): ?int
    {
        $n = $this->get['refresh'] ?? null;
        if (!is_string($n) || preg_match('/\A[0-9]{1,9}\z/', $n) !== 1) {
            return null;
        }

        return max(self::REFRESH_MIN, min(self::REFRESH_MAX, (int) $n));
    }

    private const CSS = <<<'CSS'
        :root{--bg:#f5f6f8;--card:#fff;--ink:#1d2330;--mute:#6b7385;--line:#e3e6ec;--accent:#3461c1;--ok:#2f9e62;--mid:#d08a1f;--high:#c8412f}
        *{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--ink)}
        header{padding:18px 28px;background:var(--ink);color:#fff}header h1{margin:0;font-size:22px;letter-spacing:.5px}
        header p{margin:4px 0 0}header a{color:#cfd8f0}.backend{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px;color:var(--mute);margin:0 0 10px}
        .meta{color:#aab2c5;font-size:12px}main{padding:20px 28px}.store{margin-bottom:28px}
        .store h2{margin:0 0 2px;font-size:18px;font-family:ui-monospace,Menlo,Consolas,monospace}
        .cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:16px}
        .card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:14px 18px}.wide{grid-column:1/-1}
        main>.card{margin-top:16px}
        h3{margin:0 0 10px;font-size:15px;color:var(--mute);font-weight:600;text-transform:uppercase;letter-spacing:.6px}
        table{width:100%;border-collapse:collapse}th,td{padding:4px 6px;text-align:left;border-bottom:1px solid var(--line)}
        th{font-weight:500;color:var(--mute)}td.n{text-align:right;font-variant-numeric:tabular-nums}td.none{color:var(--mute);font-style:italic}
        .list th{font-size:12px;text-transform:uppercase}.list td:first-child,td.key{font-family:ui-monospace,Menlo,Consolas,monospace;word-break:break-all}
        .gauge{display:block;width:150px;margin:0 auto 8px}.gauge circle{fill:none;stroke-width:12}.gauge .track{stroke:var(--line)}
        .gauge.low .fill{stroke:var(--ok)}.gauge.mid .fill{stroke:var(--mid)}.gauge.high .fill{stroke:var(--high)}
        .gauge text{font-size:16px;font-weight:600;fill:var(--ink)}
        .rate{font-size:28px;font-weight:600;margin:6px 0}.ratebar{width:100%;height:8px;margin-bottom:10px}
        .ratebar .track{fill:var(--line)}.ratebar .fill{fill:var(--ok)}
        td.bar{width:40%}td.bar svg{width:100%;height:10px}td.bar rect{fill:var(--accent)}
        .shards{display:flex;gap:2px;align-items:flex-end;height:60px}.shard{flex:1;height:100%;background:var(--line);display:flex;align-items:flex-end;border-radius:2px}
        .shard span{display:block;width:100%;border-radius:2px}.shard.low span{background:var(--ok)}.shard.mid span{background:var(--mid)}.shard.high span{background:var(--high)}
        .note,.empty{color:var(--mute);font-size:13px}.error{color:var(--high);font-family:ui-monospace,Menlo,Consolas,monospace}
        .notice{background:#eef6ee;border:1px solid #cfe6cf;padding:6px 10px;border-radius:6px}
        form.find{margin-bottom:10px}input{font:inherit;padding:3px 6px}button{font:inherit;padding:3px 10px;cursor:pointer}
        button.delete{color:var(--high)}
        CSS;
}
