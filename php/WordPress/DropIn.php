<?php

namespace Ephpm\WordPress;

/**
 * `wp-content/object-cache.php`: whose it is, and putting ours there or taking it away.
 * Never touches another object cache's drop-in. Pure file work, no WordPress call: the
 * companion plugin and `wp ephpm` both use it.
 */
final class DropIn
{
    /** The drop-in is ours: a symlink to our file, or a copy of it as it is now. */
    public const OURS = 'ours';
    /** Ours, but an older copy, or a symlink to where ours no longer is: enable() replaces it. */
    public const OUTDATED = 'outdated';
    /** Another object cache's drop-in: enable() and disable() refuse to touch it. */
    public const FOREIGN = 'foreign';
    public const MISSING = 'missing';

    /** Every version of our drop-in carries this line in its header. */
    private const HEADER = 'Plugin Name: ephpm object cache (drop-in)';

    /**
     * @param string $source Our object-cache.php (beside ObjectCache.php).
     * @param string $contentDir WP_CONTENT_DIR.
     */
    public function __construct(private string $source, private string $contentDir)
    {
    }

    public function path(): string
    {
        return rtrim($this->contentDir, '/') . '/object-cache.php';
    }

    public function source(): string
    {
        return $this->source;
    }

    public function state(): string
    {
        $path = $this->path();
        if (!file_exists($path)) {
            // A symlink whose target is gone: ours if it pointed at an ephpm drop-in.
            return is_link($path) ? (basename((string) readlink($path)) === 'object-cache.php' && str_contains((string) readlink($path), 'ephpm') ? self::OUTDATED : self::FOREIGN) : self::MISSING;
        }
        if (realpath($path) === realpath($this->source)) {
            return self::OURS;
        }
        $head = (string) @file_get_contents($path, false, null, 0, 4096);
        if (!str_contains($head, self::HEADER)) {
            return self::FOREIGN;
        }
        return @file_get_contents($path) === @file_get_contents($this->source) ? self::OURS : self::OUTDATED;
    }

    /**
     * Puts our drop-in in place: a symlink (it finds its classes beside its target), or a
     * copy when `$copy` or when the file system refuses symlinks. Never replaces another
     * drop-in, also one placed between this check and the write: the new file takes the
     * name only if the name is free (symlink(), link()), or replaces our own outdated one.
     *
     * @return string What was done, for a person.
     * @throws \RuntimeException when another drop-in is there, or the write fails.
     */
    public function enable(bool $copy = false): string
    {
        $path = $this->path();
        $state = $this->state();
        if ($state === self::OURS) {
            return "the drop-in is already in place: $path";
        }
        if ($state === self::FOREIGN) {
            throw new \RuntimeException("$path is another object cache's drop-in; it was left as it is (remove it first to use ephpm's)");
        }
        if (!is_file($this->source)) {
            throw new \RuntimeException("ephpm's drop-in is not at {$this->source}");
        }
        $temp = $path . '.ephpm-' . bin2hex(random_bytes(6));
        $made = !$copy && @symlink($this->source, $temp);
        if (!$made) {
            $copy = true;
            if (!@copy($this->source, $temp)) {
                throw new \RuntimeException("cannot write in {$this->contentDir}: " . (error_get_last()['message'] ?? 'unknown error'));
            }
        }
        // Missing: take the name only if it is still free. Outdated (ours): replace it.
        $placed = $state === self::MISSING ? @link($temp, $path) || (is_link($temp) && @symlink($this->source, $path)) : @rename($temp, $path);
        if (file_exists($temp) || is_link($temp)) {
            @unlink($temp);
        }
        if (!$placed) {
            throw new \RuntimeException(file_exists($path) ? "$path appeared meanwhile; it was left as it is" : "cannot write $path: " . (error_get_last()['message'] ?? 'unknown error'));
        }
        return ($copy ? 'copied' : 'linked') . " ephpm's drop-in to $path";
    }

    /**
     * Removes our drop-in; another object cache's is left alone.
     *
     * @throws \RuntimeException when the drop-in is another's, or cannot be removed.
     */
    public function disable(): string
    {
        $path = $this->path();
        $state = $this->state();
        if ($state === self::MISSING) {
            return "there is no drop-in at $path";
        }
        if ($state === self::FOREIGN) {
            throw new \RuntimeException("$path is another object cache's drop-in; it was left as it is");
        }
        if (!@unlink($path)) {
            throw new \RuntimeException("cannot remove $path: " . (error_get_last()['message'] ?? 'unknown error'));
        }
        return "removed ephpm's drop-in from $path";
    }
}
