<?php

namespace Ephpm\Symfony\Profiler;

/**
 * Ephpm\MemoLock as a pool's callback wrapper, timed for the profiler. MemoLock is final,
 * so this holds one and passes every call on: __invoke() to MemoLock's own, with the
 * callback wrapped only to see whether this process computed the item (else it waited
 * and was served another process's computation) and how long the computation took; the
 * rest of the call is the wait. Other methods (acquire, exclusively, once…) are passed on
 * untouched; a parameter typed `Ephpm\MemoLock` cannot take this object.
 */
final class TracedMemoLock
{
    public function __construct(
        private object $memoLock,
        private string $pool,
        private EphpmDataCollector $collector,
    ) {
    }

    public function __invoke(callable $callback, object $item, bool &$save, object $pool, ?\Closure $setMetadata = null, ?object $logger = null, ?float $beta = null): mixed
    {
        $computed = false;
        $computing = 0;
        $start = hrtime(true);
        $timed = static function (object $item, bool &$save) use ($callback, &$computed, &$computing) {
            $computed = true;
            $began = hrtime(true);
            try {
                return $callback($item, $save);
            } finally {
                $computing = hrtime(true) - $began;
            }
        };
        try {
            return ($this->memoLock)($timed, $item, $save, $pool, $setMetadata, $logger, $beta);
        } finally {
            $this->collector->stampede($this->pool, $item->getKey(), $computed, (hrtime(true) - $start - $computing) / 1e6);
        }
    }

    public function __call(string $method, array $arguments): mixed
    {
        return $this->memoLock->$method(...$arguments);
    }
}
