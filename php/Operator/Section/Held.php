<?php

declare(strict_types=1);

namespace Ephpm\Operator\Section;

use Ephpm\Operator\Html;
use Ephpm\Operator\Section;
use Ephpm\Operator\Snapshot;

/** What is held now: locks (by name, with TTL and fence), sessions, and the walk's extent. */
final class Held implements Section
{
    public function html(Snapshot $s, int $index): string
    {
        $summary = '<table>'
            . '<tr><th>locks held</th>' . Html::num('locks_held', $s->locksHeld) . '</tr>'
            . '<tr><th>sessions</th>' . Html::num('sessions', $s->sessions) . '</tr>'
            . '<tr><th>keys walked</th>' . Html::num('walked', $s->walked) . '</tr>'
            . (isset($s->stats['resp_server']) ? '<tr><th>Redis clients (ephpm-resp)</th><td data-metric="resp_server">'
                . Html::e((string) $s->stats['resp_server']) . '</td></tr>' : '')
            . '</table>'
            . ($s->truncated ? '<p class="note" data-metric="truncated">The walk stopped at ' . $s->walkLimit
                . ' keys: prefixes, locks, sessions and the largest entries are those of the keys walked.</p>' : '');
        if ($s->locks === []) {
            return Html::card('Held now', $summary . '<p class="empty">No lock is held.</p>');
        }
        $rows = '';
        foreach ($s->locks as $l) {
            $rows .= '<tr data-lock="' . Html::key($l['name']) . '"><td>' . Html::key($l['name']) . '</td>'
                . '<td>' . Html::ttl($l['ttl']) . '</td>' . Html::num('fence', $l['fence']) . '</tr>';
        }
        $more = $s->locksHeld > count($s->locks)
            ? '<p class="note">' . ($s->locksHeld - count($s->locks)) . ' more not listed.</p>' : '';

        return Html::card('Held now', $summary . '<table class="list"><tr><th>lock</th><th>TTL left</th><th>fence</th></tr>'
            . $rows . '</table>' . $more);
    }
}
