<?php

namespace Ephpm\Laravel;

// Laravel 13's contract for a store whose locks can be flushed apart from its items
// (`Cache::flushLocks()`, `cache:clear --locks`): EphpmStore implements it through this
// interface, which is that contract where the framework has it and empty before 13, so
// that one class serves every release.
if (interface_exists(\Illuminate\Contracts\Cache\CanFlushLocks::class)) {
    interface FlushesLocks extends \Illuminate\Contracts\Cache\CanFlushLocks
    {
    }
} else {
    interface FlushesLocks
    {
    }
}
