<?php

declare(strict_types=1);

namespace Ephpm\Operator\Section;

use Ephpm\Operator\Html;
use Ephpm\Operator\Rates;
use Ephpm\Operator\Section;
use Ephpm\Operator\Snapshot;

/**
 * Activity: the time base (how long the store has been counting), the hit rate, every
 * counter with its rate per second over the basis Rates chose (named under the table),
 * and "not counted" for what the backend does not count.
 */
final class Activity implements Section
{
    /** Counters shown, in this order; those of Rates::COUNTERS also get a rate. */
    private const SHOWN = ['entries', 'hits', 'misses', 'evictions', 'evictions_anonymous', 'evictions_cache',
        'evictions_session', 'expirations', 'lock_waits', 'lock_timeouts', 'stampedes_avoided', 'full_refusals',
        'repairs', 'resets', 'shards_locked', 'shards_writing'];

    public function __construct(private Rates $rates)
    {
    }

    public function html(Snapshot $s, int $index): string
    {
        $age = $s->stat('age_seconds');
        $rates = $this->rates->of($s);
        $rows = '';
        foreach (self::SHOWN as $name) {
            $rate = isset($rates['perSecond'][$name])
                ? '<td class="n" data-metric="' . $name . '_per_second" data-value="' . round($rates['perSecond'][$name], 6)
                    . '" data-delta="' . $rates['deltas'][$name] . '">' . self::perSecond($rates['perSecond'][$name]) . '</td>'
                : '<td></td>';
            $rows .= '<tr><th>' . $name . '</th>'
                . ($s->counts($name) ? Html::num($name, $s->stat($name)) . $rate : Html::notCounted($name) . '<td></td>') . '</tr>';
        }
        $basis = match ($rates['basis'] ?? null) {
            'previous' => 'Rates per second since the previous look at this page, '
                . sprintf('%.1f', $rates['seconds']) . ' s before this one (carried by its refresh link).',
            'start' => 'Rates per second on average since the store began counting, '
                . Html::duration($age) . ' ago. Refresh to measure since this look.',
            default => 'No rates: this store does not say how long it has been counting.',
        };
        $rate = $s->hitRate();

        return Html::card('Activity', '<table><tr><th>counting for</th>'
            . ($age > 0 ? '<td class="n" data-metric="age_seconds" data-value="' . $age . '">' . Html::duration($age) . '</td>'
                : Html::notCounted('age_seconds')) . '</tr></table>'
            . '<p class="rate" data-metric="hit_rate" data-value="' . ($rate === null ? '' : round($rate, 6)) . '">'
            . ($rate === null ? 'no lookups yet' : sprintf('%.1f%% hits', 100 * $rate)) . '</p>'
            . '<svg class="ratebar" viewBox="0 0 100 6" preserveAspectRatio="none" aria-hidden="true">'
            . '<rect width="100" height="6" class="track"/><rect width="' . ($rate === null ? 0 : round(100 * $rate, 1))
            . '" height="6" class="fill"/></svg>'
            . '<table class="counters"><tr><th></th><th>total</th><th>per second</th></tr>' . $rows . '</table>'
            . '<p class="note" data-metric="rate_basis" data-value="' . ($rates['basis'] ?? '') . '" data-seconds="'
            . ($rates === null ? '' : round($rates['seconds'], 3)) . '">' . Html::e($basis) . '</p>');
    }

    private static function perSecond(float $r): string
    {
        return $r >= 100 ? number_format($r) . '/s' : sprintf('%.2f/s', $r);
    }
}
