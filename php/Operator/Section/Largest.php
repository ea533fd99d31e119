<?php

declare(strict_types=1);

namespace Ephpm\Operator\Section;

use Ephpm\Operator\Html;
use Ephpm\Operator\Section;
use Ephpm\Operator\Snapshot;

/** The largest entries among the keys walked, with their size and TTL. */
final class Largest implements Section
{
    public function html(Snapshot $s, int $index): string
    {
        if ($s->largest === []) {
            return Html::card('Largest entries', '<p class="empty">No entries.</p>');
        }
        $rows = '';
        foreach ($s->largest as $i => $e) {
            $rows .= '<tr data-largest="' . $i . '"><td class="key">' . Html::key($e['key']) . '</td>'
                . Html::bytes('size', $e['size']) . '<td>' . Html::ttl($e['ttl']) . '</td></tr>';
        }

        return Html::card('Largest entries', '<table class="list"><tr><th>key</th><th>size</th><th>TTL left</th></tr>'
            . $rows . '</table>' . ($s->truncated ? '<p class="note">Among the first ' . $s->walkLimit . ' keys walked.</p>' : ''));
    }
}
