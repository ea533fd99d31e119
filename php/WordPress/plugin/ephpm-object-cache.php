<?php
/**
 * Plugin Name: ephpm object cache
 * Description: Enables, disables and flushes the ephpm object cache drop-in, and reports on it in Site Health. Adds `wp ephpm` commands to WP-CLI.
 * Version: 0.1.0
 * Requires at least: 6.1
 * Requires PHP: 8.2
 * License: MIT OR Apache-2.0
 * Text Domain: ephpm-object-cache
 *
 * Install: link this folder into wp-content/plugins
 * (`ln -s /usr/share/ephpm/php/WordPress/plugin wp-content/plugins/ephpm-object-cache`)
 * and activate it. Its classes are in the folder above this one (a link resolves to it),
 * in EPHPM_WP_PATH, or where the Debian package puts them.
 */

defined('ABSPATH') || exit;

(static function (): void {
    $classes = ['Config', 'ObjectCache', 'DropIn', 'Status', 'Plugin', 'Cli'];
    if (!class_exists(\Ephpm\WordPress\Plugin::class)) {
        $dirs = [dirname(__DIR__), defined('EPHPM_WP_PATH') ? (string) EPHPM_WP_PATH : '', '/usr/share/ephpm/php/WordPress'];
        foreach ($dirs as $dir) {
            if ($dir !== '' && is_file("$dir/Plugin.php")) {
                foreach ($classes as $class) {
                    // The drop-in may have loaded some of them already, from another folder.
                    if (!class_exists("Ephpm\\WordPress\\$class", false)) {
                        require_once "$dir/$class.php";
                    }
                }
                break;
            }
        }
    }
    if (!class_exists(\Ephpm\WordPress\Plugin::class, false)) {
        error_log('ephpm object cache plugin: its classes were not found (set EPHPM_WP_PATH to the folder of Plugin.php)');
        return;
    }
    (new \Ephpm\WordPress\Plugin(\Ephpm\WordPress\Status::forSite()))->register();
    if (defined('WP_CLI') && WP_CLI) {
        \WP_CLI::add_command('ephpm', \Ephpm\WordPress\Cli::class);
    }
})();
