<?php

declare(strict_types=1);

namespace Ephpm\Operator\Section;

use Ephpm\Operator\Html;
use Ephpm\Operator\Section;
use Ephpm\Operator\Snapshot;

/**
 * Each shard's fill, one bar each (Kv::stats()'s `shard_fill`): a store is full when one
 * shard is, since a key's shard is fixed by its hash, so an uneven fill shows here long
 * before in the totals. A store without shards of its own (Redis) says so.
 */
final class Shards implements Section
{
    public function html(Snapshot $s, int $index): string
    {
        $fill = $s->stats['shard_fill'] ?? [];
        if ($fill === []) {
            return Html::card('Shards', '<p class="empty" data-metric="shard_fill" data-value="">Not counted: '
                . 'this store\'s memory is not split into shards of its own.</p>');
        }
        $bars = '';
        $fullest = 0.0;
        foreach ($fill as $i => [$used, $size, $entries]) {
            $share = $size > 0 ? min(1.0, $used / $size) : 0.0;
            $fullest = max($fullest, $share);
            $level = $share > 0.9 ? 'high' : ($share > 0.7 ? 'mid' : 'low');
            $bars .= '<div class="shard ' . $level . '" data-shard="' . $i . '" data-used="' . $used . '" data-size="' . $size
                . '" data-entries="' . $entries . '" title="shard ' . $i . ': ' . Html::size($used) . ' of ' . Html::size($size)
                . ', ' . $entries . ' entries"><span style="height:' . round(100 * $share, 1) . '%"></span></div>';
        }

        return Html::card('Shards', '<div class="shards" data-metric="shard_count" data-value="' . count($fill) . '">' . $bars . '</div>'
            . '<p class="note">' . count($fill) . ' shards; the fullest at <span data-metric="shard_fullest" data-value="'
            . round($fullest, 6) . '">' . sprintf('%.1f%%', 100 * $fullest) . '</span>. A write fails or evicts when its own shard is full.</p>', 'card wide');
    }
}
