<?php

namespace Ephpm\Laravel;

use Ephpm\SessionHandler;
use SessionHandlerInterface;

/**
 * Laravel's session handler on ephpm: Ephpm\SessionHandler's locking (read takes the
 * session's lock, write writes only while it is still ours), adapted to how Laravel
 * drives a handler. Laravel never calls close(): the lock is released as soon as the
 * session is written (a request waiting for the same session goes on at once, not when
 * this one ends), and release() lets a long-running worker drop a lock it still holds
 * at the end of a job.
 */
final class EphpmSessionHandler implements SessionHandlerInterface
{
    public function __construct(private SessionHandler $handler)
    {
    }

    public function open($path, $name): bool
    {
        return $this->handler->open((string) $path, (string) $name);
    }

    public function close(): bool
    {
        return $this->handler->close();
    }

    public function read($id): string|false
    {
        return $this->handler->read((string) $id);
    }

    /** Writes the session and releases its lock. */
    public function write($id, $data): bool
    {
        try {
            return $this->handler->write((string) $id, (string) $data);
        } finally {
            $this->handler->close();
        }
    }

    public function destroy($id): bool
    {
        return $this->handler->destroy((string) $id);
    }

    /** @return int|false How many sessions were removed: 0, the store expires them itself. */
    public function gc($lifetime): int|false
    {
        return $this->handler->gc((int) $lifetime);
    }

    /** Releases the lock this handler still holds, if any (the end of a request or job). */
    public function release(): void
    {
        $this->handler->close();
    }
}
