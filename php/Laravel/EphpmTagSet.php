<?php

namespace Ephpm\Laravel;

use Illuminate\Cache\TagSet;

/**
 * Laravel's TagSet, whose first use of a tag is atomic. Laravel gives a tag without an
 * id a fresh one with forever(): requests that meet a cold tag at once each write their
 * own, so each reads and stores the item under another namespace (12 requests on a cold
 * tagged remember(): several computations, whatever the lock). Here the id is added:
 * the first writer's is everybody's. flush() still gives every tag a new id.
 */
class EphpmTagSet extends TagSet
{
    public function tagId($name)
    {
        $key = $this->tagKey($name);
        if ($id = $this->store->get($key)) {
            return $id;
        }
        $id = str_replace('.', '', uniqid('', true));
        return $this->store->add($key, $id, 0) ? $id : ($this->store->get($key) ?: $this->resetTag($name));
    }
}
