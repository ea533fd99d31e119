--TEST--
WordPress drop-in: symlinked into wp-content it finds its classes beside its target; copied, through EPHPM_WP_PATH or an autoloader that has them; a copy that finds them nowhere, or EPHPM_WP_DISABLED, defines no wp_cache_* function (WordPress then runs its own cache), the first with one log line
--EXTENSIONS--
ephpm
--SKIPIF--
<?php if (is_file('/usr/share/ephpm/php/WordPress/ObjectCache.php')) die('skip the Debian package is installed: a copied drop-in finds its classes there');
--INI--
ephpm.store_name=phpt_wp_drop_in
ephpm.shm_size=2M
--FILE--
<?php
$content = sys_get_temp_dir() . '/ephpm-wp-content-' . getmypid();
mkdir($content);
$dropIn = realpath(__DIR__ . '/../php/WordPress/object-cache.php');
$harness = file_get_contents(__DIR__ . '/harness/wordpress.inc');

/** Loads the drop-in at $path, as wp_start_object_cache() does, in a new PHP process. */
function wordpress(string $label, string $path, string $config = ''): void
{
    global $content, $harness;
    // The test shim, with the drop-in it loads swapped for $path.
    $shim = str_replace("__DIR__ . '/../../php/WordPress/object-cache.php'", var_export($path, true), $harness);
    file_put_contents("$content/shim.php", "<?php $config ?>" . $shim);
    $code = 'require ' . var_export("$content/shim.php", true) . ';'
        . 'echo function_exists("wp_cache_init") ? get_class($GLOBALS["wp_object_cache"]) . " " . json_encode([wp_cache_set("k", 1), wp_cache_get("k")]) : "no wp_cache_init", "\n";';
    $child = proc_open([PHP_BINARY, '-n', '-d', 'extension=' . getenv('EPHPM_SO'), '-d', 'ephpm.store_name=phpt_wp_drop_in', '-r', $code], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
    echo "$label: ", trim(stream_get_contents($pipes[1])), "\n";
    $log = trim(stream_get_contents($pipes[2]));
    echo $log === '' ? '' : "  log: $log\n";
    proc_close($child);
}

symlink($dropIn, "$content/object-cache.php");
wordpress('symlinked', "$content/object-cache.php");
unlink("$content/object-cache.php");
copy($dropIn, "$content/object-cache.php");
wordpress('copied, EPHPM_WP_PATH', "$content/object-cache.php", "define('EPHPM_WP_PATH', " . var_export(dirname($dropIn), true) . ');');
wordpress('copied, an autoloader', "$content/object-cache.php", 'require ' . var_export(dirname($dropIn, 2) . '/autoload.php', true) . ';');
// Found nowhere (no EPHPM_WP_PATH, no autoloader; the Debian package's path is checked by the SKIPIF).
wordpress('copied, nothing to find it by', "$content/object-cache.php");
wordpress('EPHPM_WP_DISABLED', $dropIn, "define('EPHPM_WP_DISABLED', true);");
array_map('unlink', glob("$content/*"));
rmdir($content);
--EXPECT--
symlinked: Ephpm\WordPress\ObjectCache [true,1]
copied, EPHPM_WP_PATH: Ephpm\WordPress\ObjectCache [true,1]
copied, an autoloader: Ephpm\WordPress\ObjectCache [true,1]
copied, nothing to find it by: no wp_cache_init
  log: ephpm object cache: Ephpm\WordPress\ObjectCache not found (set EPHPM_WP_PATH to the folder of ObjectCache.php); WordPress uses its own request-local cache
EPHPM_WP_DISABLED: no wp_cache_init
