<?php

namespace Ephpm\Laravel;

use Closure;
use Ephpm\SessionHandler;
use SessionHandlerInterface;
use SessionIdInterface;
use SessionUpdateTimestampHandlerInterface;

/**
 * Laravel's session handler on ephpm: Ephpm\SessionHandler's locking (read takes the
 * session's lock, write writes only while it is still ours), adapted to how Laravel
 * drives a handler:
 * - Laravel never calls close(): the lock is released as soon as the session is written
 *   (a request waiting for the same session goes on at once, not when this one ends),
 *   and release() drops a lock still held at the end of a request or a worker's job.
 * - A read that fails (`lock_timeout` "fail") starts the session empty, as Laravel does
 *   for any unreadable session, and its write is refused: native PHP never writes a
 *   session whose start failed, and a write here would overwrite the holder's.
 * - A session written again after its lock went (code that calls `save()` mid-request,
 *   then Laravel's own save at the end) takes the lock again and writes only if nobody
 *   wrote the session in between; otherwise the late write is dropped and logged, so
 *   that it never overwrites another request's update.
 * - Warnings go to Laravel's logger: Laravel turns an E_WARNING into an exception.
 */
final class EphpmSessionHandler implements SessionHandlerInterface, SessionIdInterface, SessionUpdateTimestampHandlerInterface
{
    /** The id whose read failed: its write is refused. */
    private ?string $unread = null;
    /** The id whose lock this handler holds (read, not yet written or released). */
    private ?string $locked = null;
    /** @var array<string, string> What this handler last wrote, by id. */
    private array $written = [];

    /** @param object|null $logger A PSR-3 logger; without one, warnings stay E_WARNINGs. */
    public function __construct(private SessionHandler $handler, private ?object $logger = null)
    {
    }

    public function open($path, $name): bool
    {
        return $this->handler->open((string) $path, (string) $name);
    }

    public function close(): bool
    {
        $this->locked = null;
        return $this->handler->close();
    }

    /**
     * A new id from ephpm's handler. Laravel makes its own ids; PHP's session module asks
     * a handler used with session_set_save_handler() (PHP 8.6 warns when a handler has
     * neither this nor validateId()).
     */
    public function create_sid(): string
    {
        return $this->handler->create_sid();
    }

    /** Whether a session of that id exists (session.use_strict_mode asks). */
    public function validateId($id): bool
    {
        return $this->handler->validateId((string) $id);
    }

    /** PHP's lazy write of an unchanged session: a write, so that its lock goes too. */
    public function updateTimestamp($id, $data): bool
    {
        return $this->write($id, $data);
    }

    public function read($id): string|false
    {
        $data = $this->logged(fn () => $this->handler->read((string) $id));
        $this->unread = $data === false ? (string) $id : null;
        $this->locked = $data === false ? null : (string) $id;
        return $data === false ? '' : $data;
    }

    /** Writes the session and releases its lock. */
    public function write($id, $data): bool
    {
        if ($this->unread === (string) $id) {
            $this->logger?->warning(sprintf('ephpm: session %s was not written: it could not be read (its lock was busy)', $id));
            return false;
        }
        $id = (string) $id;
        if ($this->locked !== $id && isset($this->written[$id]) && !$this->unchangedSinceWritten($id)) {
            $this->logger?->warning(sprintf('ephpm: session %s was written again after its lock was released, and another request wrote it meanwhile: this late write is dropped', $id));
            return false;
        }
        try {
            $ok = $this->logged(fn () => $this->handler->write($id, (string) $data));
            if ($ok) {
                $this->written = [$id => (string) $data];
            }
            return $ok;
        } finally {
            $this->locked = null;
            $this->handler->close();
        }
    }

    /**
     * Takes the session's lock again (kept for the write that follows) and says whether
     * the stored session is still what this handler wrote last.
     */
    private function unchangedSinceWritten(string $id): bool
    {
        $stored = $this->logged(fn () => $this->handler->read($id));
        if ($stored !== $this->written[$id]) {
            $this->handler->close();
            return false;
        }
        return true;
    }

    public function destroy($id): bool
    {
        unset($this->written[(string) $id]);
        $this->locked = null;
        return $this->logged(fn () => $this->handler->destroy((string) $id));
    }

    /** @return int|false How many sessions were removed: 0, the store expires them itself. */
    public function gc($lifetime): int|false
    {
        return $this->handler->gc((int) $lifetime);
    }

    /** Releases the lock this handler still holds, if any (the end of a request or job). */
    public function release(): void
    {
        $this->unread = null;
        $this->locked = null;
        $this->written = [];
        $this->handler->close();
    }

    /** Runs $call with its E_WARNINGs sent to the logger instead, when there is one. */
    private function logged(Closure $call): mixed
    {
        if ($this->logger === null) {
            return $call();
        }
        set_error_handler(function (int $type, string $message): bool {
            $this->logger->warning($message);
            return true;
        }, E_WARNING);
        try {
            return $call();
        } finally {
            restore_error_handler();
        }
    }
}
