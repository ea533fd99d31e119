<?php

declare(strict_types=1);

namespace Ephpm\Operator\Section;

use Ephpm\Operator\Html;
use Ephpm\Operator\Section;
use Ephpm\Operator\Snapshot;

/**
 * Memory: used against the store's size, what is free, the largest value a write can
 * store. A size of 0 is a store without a limit (Redis with no `maxmemory`): shown as
 * such, its free memory not counted, never a 0.0 % gauge.
 */
final class Memory implements Section
{
    public function html(Snapshot $s, int $index): string
    {
        $size = $s->stat('memory_size');
        $used = $s->stat('memory_used');
        $max = $s->stat('max_item_size');

        return Html::card('Memory', self::gauge($used, $size)
            . '<table><tr><th>used</th>' . Html::bytes('memory_used', $used) . '</tr>'
            . '<tr><th>free</th>' . ($size > 0 ? Html::bytes('memory_free', $s->stat('memory_free')) : Html::notCounted('memory_free')) . '</tr>'
            . '<tr><th>size</th>' . ($size > 0 ? Html::bytes('memory_size', $size)
                : '<td class="n" data-metric="memory_size" data-value="0">no limit</td>') . '</tr>'
            . '<tr><th>largest item</th>' . ($max > 0 ? Html::bytes('max_item_size', $max) : Html::notCounted('max_item_size')) . '</tr>'
            . '<tr><th>' . ($s->stats['shard_fill'] === [] ? 'servers (masters)' : 'shards') . '</th>' . Html::num('shards', $s->stat('shards')) . '</tr>'
            . '</table>');
    }

    /** A ring filled to used/size; without a size, no ring but the words. */
    private static function gauge(int $used, int $size): string
    {
        if ($size === 0) {
            return '<p class="rate" data-metric="memory_share" data-value="">' . Html::size($used) . '</p>'
                . '<p class="note">in use; the server sets no memory limit</p>';
        }
        $share = min(1.0, $used / $size);
        $circumference = 2 * M_PI * 40;
        $dash = round($share * $circumference, 2);
        $level = $share > 0.9 ? 'high' : ($share > 0.7 ? 'mid' : 'low');

        return '<svg class="gauge ' . $level . '" viewBox="0 0 100 100" role="img" aria-label="memory used">'
            . '<circle cx="50" cy="50" r="40" class="track"/>'
            . '<circle cx="50" cy="50" r="40" class="fill" stroke-dasharray="' . $dash . ' ' . round($circumference, 2)
            . '" transform="rotate(-90 50 50)"/>'
            . '<text x="50" y="56" text-anchor="middle" data-metric="memory_share" data-value="' . round($share, 6) . '">'
            . sprintf('%.1f%%', 100 * $share) . '</text></svg>';
    }
}
