<?php
/**
 * Plugin Name: ephpm object cache (drop-in)
 * Description: WordPress's object cache on the ephpm store, shared by every PHP process of the host (or a fleet's Redis or cluster).
 *
 * Install: `ln -s /usr/share/ephpm/php/WordPress/object-cache.php wp-content/object-cache.php`
 * (or a copy, with EPHPM_WP_PATH naming this folder). Settings: see Config.php and the
 * docs/wordpress.md.
 *
 * The functions below are WordPress's object cache API (wp-includes/cache.php), each
 * handing over to $wp_object_cache, an Ephpm\WordPress\ObjectCache. They are defined only
 * when that class and the extension are there: otherwise this file defines nothing and
 * WordPress runs its own request-local cache (and keeps transients in its database,
 * as it does without a persistent cache) after one line in the error log.
 */

$ephpm_wp_problem = null; // why the drop-in cannot serve, for the admin notice
$ephpm_wp_ready = (static function () use (&$ephpm_wp_problem): bool {
    if (defined('EPHPM_WP_DISABLED') && EPHPM_WP_DISABLED) {
        return false;
    }
    if (!class_exists(\Ephpm\Kv::class)) {
        $ephpm_wp_problem = 'the ephpm extension is not loaded';
        error_log('ephpm object cache: the ephpm extension is not loaded; WordPress uses its own request-local cache');
        return false;
    }
    // A Composer autoloader may have the class; else this file's own folder (a symlink
    // resolves to it), EPHPM_WP_PATH for a copy, or where the Debian package puts it.
    if (!class_exists(\Ephpm\WordPress\ObjectCache::class)) {
        $dirs = [defined('EPHPM_WP_PATH') ? (string) EPHPM_WP_PATH : '', __DIR__, '/usr/share/ephpm/php/WordPress'];
        foreach ($dirs as $dir) {
            if ($dir !== '' && is_file("$dir/ObjectCache.php") && is_file("$dir/Config.php")) {
                require_once "$dir/Config.php";
                require_once "$dir/ObjectCache.php";
                break;
            }
        }
    }
    if (!class_exists(\Ephpm\WordPress\ObjectCache::class, false)) {
        $ephpm_wp_problem = 'Ephpm\\WordPress\\ObjectCache not found (set EPHPM_WP_PATH to the folder of ObjectCache.php)';
        error_log('ephpm object cache: Ephpm\WordPress\ObjectCache not found (set EPHPM_WP_PATH to the folder of ObjectCache.php); WordPress uses its own request-local cache');
        return false;
    }
    return true;
})();

if ($ephpm_wp_ready) :

    // Code written for core's cache and for other drop-ins names the class: WordPress's
    // own tests make `new WP_Object_Cache()`, plugins check `instanceof WP_Object_Cache`.
    // Core declares it only without a drop-in, so the name is free here.
    if (!class_exists('WP_Object_Cache', false)) {
        class_alias(\Ephpm\WordPress\ObjectCache::class, 'WP_Object_Cache');
    }

    function wp_cache_init()
    {
        $GLOBALS['wp_object_cache'] = new \Ephpm\WordPress\ObjectCache(
            \Ephpm\WordPress\Config::fromConstants(),
            function_exists('is_multisite') && is_multisite(),
            function_exists('get_current_blog_id') ? get_current_blog_id() : 1,
        );
    }

    function wp_cache_add($key, $data, $group = '', $expire = 0)
    {
        global $wp_object_cache;
        return $wp_object_cache->add($key, $data, $group, (int) $expire);
    }

    function wp_cache_add_multiple(array $data, $group = '', $expire = 0)
    {
        global $wp_object_cache;
        return $wp_object_cache->add_multiple($data, $group, $expire);
    }

    function wp_cache_replace($key, $data, $group = '', $expire = 0)
    {
        global $wp_object_cache;
        return $wp_object_cache->replace($key, $data, $group, (int) $expire);
    }

    function wp_cache_set($key, $data, $group = '', $expire = 0)
    {
        global $wp_object_cache;
        return $wp_object_cache->set($key, $data, $group, (int) $expire);
    }

    function wp_cache_set_multiple(array $data, $group = '', $expire = 0)
    {
        global $wp_object_cache;
        return $wp_object_cache->set_multiple($data, $group, $expire);
    }

    function wp_cache_get($key, $group = '', $force = false, &$found = null)
    {
        global $wp_object_cache;
        return $wp_object_cache->get($key, $group, $force, $found);
    }

    function wp_cache_get_multiple($keys, $group = '', $force = false)
    {
        global $wp_object_cache;
        return $wp_object_cache->get_multiple($keys, $group, $force);
    }

    function wp_cache_delete($key, $group = '')
    {
        global $wp_object_cache;
        return $wp_object_cache->delete($key, $group);
    }

    function wp_cache_delete_multiple(array $keys, $group = '')
    {
        global $wp_object_cache;
        return $wp_object_cache->delete_multiple($keys, $group);
    }

    function wp_cache_incr($key, $offset = 1, $group = '')
    {
        global $wp_object_cache;
        return $wp_object_cache->incr($key, $offset, $group);
    }

    function wp_cache_decr($key, $offset = 1, $group = '')
    {
        global $wp_object_cache;
        return $wp_object_cache->decr($key, $offset, $group);
    }

    /** This site's whole cache, in the store too. */
    function wp_cache_flush()
    {
        global $wp_object_cache;
        return $wp_object_cache->flush();
    }

    /** This request's copies only: the store keeps its values. */
    function wp_cache_flush_runtime()
    {
        global $wp_object_cache;
        return $wp_object_cache->flush_runtime();
    }

    function wp_cache_flush_group($group)
    {
        global $wp_object_cache;
        return $wp_object_cache->flush_group($group);
    }

    function wp_cache_supports($feature)
    {
        return in_array($feature, ['add_multiple', 'set_multiple', 'get_multiple', 'delete_multiple', 'flush_runtime', 'flush_group'], true);
    }

    function wp_cache_close()
    {
        global $wp_object_cache;
        return $wp_object_cache->close();
    }

    function wp_cache_add_global_groups($groups)
    {
        global $wp_object_cache;
        $wp_object_cache->add_global_groups($groups);
    }

    function wp_cache_add_non_persistent_groups($groups)
    {
        global $wp_object_cache;
        $wp_object_cache->add_non_persistent_groups($groups);
    }

    function wp_cache_switch_to_blog($blog_id)
    {
        global $wp_object_cache;
        $wp_object_cache->switch_to_blog($blog_id);
    }

    /**
     * Not core's: the value of `$key`, computed by `$callback()` when missing, with one
     * process computing a cold key and the others (every process and host of the store)
     * waiting for its value. See Ephpm\WordPress\ObjectCache::remember(). Named ephpm_*
     * because plugins define wp_cache_remember() themselves, with different signatures.
     */
    function ephpm_cache_remember($key, callable $callback, $group = '', $expire = 0)
    {
        global $wp_object_cache;
        return $wp_object_cache->remember($key, $callback, $group, (int) $expire);
    }

    /** @deprecated 3.5.0 Use wp_cache_switch_to_blog(). */
    function wp_cache_reset()
    {
        if (function_exists('_deprecated_function')) {
            _deprecated_function(__FUNCTION__, '3.5.0', 'wp_cache_switch_to_blog()');
        }
        global $wp_object_cache;
        $wp_object_cache->reset();
    }

endif;

// An administrator is told, on every admin page, when the store cannot serve (the
// extension missing, the store unreachable): the site keeps running on its request cache.
if (function_exists('add_action')) {
    $ephpm_wp_notice = static function () use ($ephpm_wp_problem): void {
        $cache = $GLOBALS['wp_object_cache'] ?? null;
        $why = $ephpm_wp_problem ?? ($cache instanceof \Ephpm\WordPress\ObjectCache ? $cache->problem() : null);
        if ($why === null || !current_user_can(is_network_admin() ? 'manage_network_options' : 'manage_options')) {
            return;
        }
        printf(
            '<div class="notice notice-error"><p><strong>%s</strong> %s</p><p>%s</p></div>',
            esc_html__('ephpm object cache:', 'ephpm-object-cache'),
            esc_html__('the persistent object cache is not in use; WordPress runs on its request-local cache.', 'ephpm-object-cache'),
            esc_html($why),
        );
    };
    add_action('admin_notices', $ephpm_wp_notice);
    add_action('network_admin_notices', $ephpm_wp_notice);
    unset($ephpm_wp_notice);
}
unset($ephpm_wp_ready, $ephpm_wp_problem);
