<?php
/**
 * Plugin Name: queries per page (test and bench mu-plugin)
 * Description: Adds X-Queries (the database queries of this request, get_num_queries()),
 * X-Object-Cache (the class of $wp_object_cache, and "ext" when WordPress uses it as a
 * persistent cache) and X-Cache-Hits to every response. The page is held in an output
 * buffer until shutdown, so the headers go out after the last query.
 */
ob_start();
add_action('shutdown', static function (): void {
    if (!headers_sent()) {
        global $wp_object_cache;
        header('X-Queries: ' . get_num_queries());
        header('X-Object-Cache: ' . (is_object($wp_object_cache) ? get_class($wp_object_cache) : 'none')
            . (wp_using_ext_object_cache() ? ' ext' : ''));
        header('X-Cache-Hits: ' . (int) ($wp_object_cache->cache_hits ?? 0));
    }
}, 0);
