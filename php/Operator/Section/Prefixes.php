<?php

declare(strict_types=1);

namespace Ephpm\Operator\Section;

use Ephpm\Operator\Html;
use Ephpm\Operator\Section;
use Ephpm\Operator\Snapshot;

/** Entries by key prefix (before the first ":"), most keys first, with a bar each. */
final class Prefixes implements Section
{
    /** Prefixes shown; the rest are summed in one row. */
    public const SHOWN = 20;

    public function html(Snapshot $s, int $index): string
    {
        if ($s->prefixes === []) {
            return Html::card('Entries by prefix', '<p class="empty">No entries.</p>', 'card wide');
        }
        $max = max(array_column($s->prefixes, 'keys'));
        $rows = '';
        $shown = 0;
        $other = ['keys' => 0, 'bytes' => 0, 'prefixes' => 0];
        foreach ($s->prefixes as $prefix => $p) {
            if ($shown++ >= self::SHOWN) {
                $other['keys'] += $p['keys'];
                $other['bytes'] += $p['bytes'];
                $other['prefixes']++;
                continue;
            }
            $prefix = (string) $prefix;
            $label = $prefix === '' ? '<em>(no prefix)</em>' : Html::key($prefix) . ':';
            $rows .= '<tr data-prefix="' . Html::key($prefix) . '"><td>' . $label . '</td>'
                . Html::num('keys', $p['keys']) . Html::bytes('bytes', $p['bytes'])
                . '<td class="bar"><svg viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true">'
                . '<rect width="' . round(100 * $p['keys'] / $max, 1) . '" height="8" rx="2"/></svg></td></tr>';
        }
        if ($other['prefixes'] > 0) {
            $rows .= '<tr class="other"><td>' . $other['prefixes'] . ' more</td>' . Html::num('keys', $other['keys'])
                . Html::bytes('bytes', $other['bytes']) . '<td></td></tr>';
        }

        return Html::card('Entries by prefix', '<table class="list"><tr><th>prefix</th><th>keys</th><th>bytes</th><th></th></tr>'
            . $rows . '</table>', 'card wide');
    }
}
