<?php

namespace Ephpm\Symfony;

use Symfony\Contracts\Cache\ItemInterface;

/**
 * The item StaleCacheAdapter passes to a callback: it carries the lifetime the callback
 * chooses (0: expired at once, so the value is served but not stored). @internal
 */
final class StaleCacheItem implements ItemInterface
{
    private mixed $value = null;

    public function __construct(private string $key, private int|float $ttl)
    {
    }

    public function getKey(): string
    {
        return $this->key;
    }

    public function get(): mixed
    {
        return $this->value;
    }

    public function isHit(): bool
    {
        return false;
    }

    public function set($value): static
    {
        $this->value = $value;
        return $this;
    }

    public function expiresAt($expiration): static
    {
        $this->ttl = match (true) {
            $expiration === null => $this->ttl,
            $expiration instanceof \DateTimeInterface => max(0, (float) $expiration->format('U.u') - microtime(true)),
            default => throw new \TypeError(sprintf('Expiration date must implement DateTimeInterface or be null, "%s" given.', get_debug_type($expiration))),
        };
        return $this;
    }

    public function expiresAfter($time): static
    {
        $this->ttl = match (true) {
            $time === null => $this->ttl,
            $time instanceof \DateInterval => max(1, (new \DateTimeImmutable('@0'))->add($time)->getTimestamp()),
            is_int($time) && $time > 0 => $time,
            is_int($time) => 0,
            default => throw new \TypeError(sprintf('Expiration date must be an integer, a DateInterval or null, "%s" given.', get_debug_type($time))),
        };
        return $this;
    }

    public function tag($tags): ItemInterface
    {
        throw new \LogicException(sprintf('Cache item "%s" comes from Ephpm\Symfony\StaleCacheAdapter, which is not tag-aware: it cannot be tagged.', $this->key));
    }

    public function getMetadata(): array
    {
        return [];
    }

    /** The lifetime the callback chose, in seconds. */
    public function lifetime(): int|float
    {
        return $this->ttl;
    }
}
