<?php

namespace Ephpm\WordPress;

/**
 * Manages the ephpm object cache: its drop-in in wp-content and its store.
 *
 * Registered as `wp ephpm` by the companion plugin when WP-CLI runs it. Run WP-CLI as
 * the web server's Unix user (`sudo -u www-data wp ephpm status`): on shm:// another
 * user has a store of its own.
 */
final class Cli
{
    public function __construct(private ?Status $status = null)
    {
    }

    /**
     * Shows whether the drop-in is in place, the store it uses (password masked), whether
     * the store answers, and its counters.
     *
     * ## EXAMPLES
     *
     *     wp ephpm status
     *
     * @when after_wp_load
     */
    public function status(array $args = [], array $assoc = []): void
    {
        foreach ($this->site()->report() as $label => $value) {
            \WP_CLI::line(sprintf('%-17s %s', $label . ':', $value));
        }
    }

    /**
     * Puts ephpm's drop-in in wp-content (a symlink, or a copy) and empties this site's
     * cache, which may hold values from before. Another object cache's drop-in is left
     * as it is, and the command fails.
     *
     * ## OPTIONS
     *
     * [--copy]
     * : Copy the drop-in instead of linking it (it then finds its classes through
     * EPHPM_WP_PATH, Composer, or /usr/share/ephpm/php/WordPress).
     *
     * ## EXAMPLES
     *
     *     wp ephpm enable
     *
     * @when after_wp_load
     */
    public function enable(array $args = [], array $assoc = []): void
    {
        try {
            $done = $this->site()->dropIn()->enable(!empty($assoc['copy']));
        } catch (\RuntimeException $e) {
            \WP_CLI::error($e->getMessage());
            return;
        }
        $this->site()->flush();
        \WP_CLI::success($done . '; the cache was emptied');
    }

    /**
     * Removes ephpm's drop-in from wp-content; WordPress then runs its own cache. Another
     * object cache's drop-in is left as it is, and the command fails.
     *
     * ## EXAMPLES
     *
     *     wp ephpm disable
     *
     * @when after_wp_load
     */
    public function disable(array $args = [], array $assoc = []): void
    {
        try {
            \WP_CLI::success($this->site()->dropIn()->disable());
        } catch (\RuntimeException $e) {
            \WP_CLI::error($e->getMessage());
        }
    }

    /**
     * Empties this site's object cache in the store (every blog of a network, every
     * group), or one group. Other sites on the store, sessions and locks are left.
     *
     * ## OPTIONS
     *
     * [--group=<group>]
     * : Empty this group only (every blog's).
     *
     * ## EXAMPLES
     *
     *     wp ephpm flush
     *     wp ephpm flush --group=options
     *
     * @when after_wp_load
     */
    public function flush(array $args = [], array $assoc = []): void
    {
        $group = isset($assoc['group']) ? (string) $assoc['group'] : null;
        if ($group === '') {
            \WP_CLI::error('--group needs a group name');
            return;
        }
        if (!$this->site()->flush($group)) {
            \WP_CLI::error('the store could not be reached; nothing was emptied');
            return;
        }
        \WP_CLI::success($group === null ? "this site's object cache was emptied" : "the group '$group' was emptied");
    }

    private function site(): Status
    {
        return $this->status ??= Status::forSite();
    }
}
