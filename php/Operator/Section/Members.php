<?php

declare(strict_types=1);

namespace Ephpm\Operator\Section;

use Ephpm\Operator\Html;
use Ephpm\Operator\Metrics;
use Ephpm\Operator\Section;
use Ephpm\Operator\Snapshot;
use Ephpm\StoreException;

/**
 * A cluster:// store's members as the host's node sees them (Kv::members(), the same as
 * `ephpm cluster`): state, last heard, share of the keys held here, copies pending and
 * dropped, clock skew, data-plane version. Nothing for a store that is no cluster. The
 * status page shows them (html) and the metrics export them with a `member` label
 * (metrics); ARCHITECTURE.md §9.4 says how each figure is made.
 */
final class Members implements Section
{
    private const STATES = ['alive' => 0, 'suspect' => 1, 'dead' => 2];

    public function html(Snapshot $s, int $index): string
    {
        [$members, $error] = self::read($s);
        if ($error !== null) {
            return Html::card('Cluster members', '<p class="error" data-metric="members_error">' . Html::key($error) . '</p>');
        }
        if ($members === []) {
            return '';
        }
        $rows = '';
        foreach ($members as $m) {
            $rows .= '<tr data-member="' . Html::key($m['id']) . '" data-state="' . Html::e($m['state']) . '">'
                . '<td>' . Html::key($m['id']) . ($m['this_node'] ? ' (this node)' : '') . '</td>'
                . '<td data-metric="state">' . Html::e($m['state']) . '</td>'
                . '<td class="n" data-metric="last_heard_ms" data-value="' . ($m['last_heard_ms'] ?? '') . '">'
                . ($m['last_heard_ms'] === null ? '-' : sprintf('%.1f s ago', $m['last_heard_ms'] / 1000)) . '</td>'
                . '<td class="n" data-metric="share" data-value="' . $m['share'] . '">' . sprintf('%.1f%%', $m['share'] * 100) . '</td>'
                . Html::num('keys', $m['keys'])
                . Html::num('copies_pending', $m['copies_pending'])
                . Html::num('copies_dropped', $m['copies_dropped'])
                . '<td class="n" data-metric="clock_skew_ms" data-value="' . ($m['clock_skew_ms'] ?? '') . '">'
                . ($m['clock_skew_ms'] === null ? '-' : sprintf('%+d ms', $m['clock_skew_ms'])) . '</td>'
                . '<td class="n" data-metric="version" data-value="' . ($m['version'] ?? '') . '">'
                . ($m['version'] ?? 'none of ' . implode(', ', $m['versions'])) . '</td></tr>';
        }

        return Html::card('Cluster members', '<table class="list"><tr><th>member</th><th>state</th><th>heard</th>'
            . '<th>share</th><th>keys</th><th>copies pending</th><th>copies dropped</th><th>clock skew</th>'
            . '<th>version</th></tr>' . $rows . '</table>');
    }

    /** The members' series, each with the store's and the member's label. */
    public static function metrics(Snapshot $s, Metrics $out): void
    {
        [$members] = self::read($s);
        foreach ($members as $m) {
            $labels = ['store' => $s->store, 'member' => $m['id']];
            $out->add('ephpm_cluster_member_state', 'gauge',
                'A member as this host\'s node sees it: 0 alive, 1 suspect (heartbeat stopped, not yet given up), 2 dead.',
                $labels, self::STATES[$m['state']] ?? 2);
            if ($m['last_heard_ms'] !== null) {
                $out->add('ephpm_cluster_member_last_heard_seconds', 'gauge',
                    'Seconds since the member\'s heartbeat last moved.', $labels, $m['last_heard_ms'] / 1000);
            }
            $out->add('ephpm_cluster_member_share', 'gauge',
                'Of the keys this host holds, the share the member owns (0 to 1).', $labels, $m['share']);
            $out->add('ephpm_cluster_member_copies_pending', 'gauge',
                'Copies of writes from this node to the member on their way.', $labels, $m['copies_pending']);
            $out->add('ephpm_cluster_member_copies_dropped_total', 'counter',
                'Copies of writes from this node to the member that never landed.', $labels, $m['copies_dropped']);
            if ($m['clock_skew_ms'] !== null) {
                $out->add('ephpm_cluster_member_clock_skew_seconds', 'gauge',
                    'The member\'s clock minus this node\'s, from its gossip.', $labels, $m['clock_skew_ms'] / 1000);
            }
        }
    }

    /** @return array{0: list<array<string, mixed>>, 1: ?string} the members, or why they could not be read */
    private static function read(Snapshot $s): array
    {
        if ($s->kv === null) {
            return [[], null];
        }
        try {
            return [$s->kv->members(), null];
        } catch (StoreException $e) {
            return [[], $e->getMessage()];
        }
    }
}
