<?php

declare(strict_types=1);

namespace Ephpm\Operator;

/**
 * One part of a store's view on the status page (memory, activity, shards, keys…). A
 * new part is a class that implements this and one entry in StatusPage::sections().
 */
interface Section
{
    /**
     * The part's HTML for one store, or '' when it has nothing to show.
     *
     * @param int $index the store's place in the page's list (forms name it)
     */
    public function html(Snapshot $s, int $index): string;
}
