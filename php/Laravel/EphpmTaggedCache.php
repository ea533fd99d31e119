<?php

namespace Ephpm\Laravel;

use Ephpm\MemoLock;
use Illuminate\Cache\TagSet;
use Illuminate\Cache\TaggedCache;

/**
 * `Cache::tags([...])` on an ephpm store: Laravel's TaggedCache (its keys, flush and
 * events), with `remember()` and `rememberForever()` computing a cold key once across
 * processes, as the untagged repository does.
 */
class EphpmTaggedCache extends TaggedCache
{
    use ComputesOnce;

    public function __construct(EphpmStore $store, TagSet $tags, private ?MemoLock $memo = null, private ?object $logger = null)
    {
        parent::__construct($store, $tags);
    }
}
