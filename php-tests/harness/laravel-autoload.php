<?php
/**
 * Laravel for the tests: Debian's php-laravel-framework, or, with EPHPM_LARAVEL_SRC, a
 * checkout of one of Laravel's public release branches that Debian does not package (11
 * and 12: php-tests/laravel-branches/README.md lays them out). A checkout is loaded as
 * its composer.json says (its PSR-4 roots, then its helper files) with the third-party
 * libraries Debian's php-laravel-framework depends on (their own Debian autoloaders), and
 * nothing of Debian's Illuminate: that is another release, whose classes and helpers
 * would silently stand in for the checkout's.
 */
$src = getenv('EPHPM_LARAVEL_SRC');
if ($src === false || $src === '') {
    require_once '/usr/share/php/Illuminate/autoload.php';
    return;
}
$composer = json_decode((string) file_get_contents("$src/composer.json"), true, 512, JSON_THROW_ON_ERROR);
$roots = $composer['autoload']['psr-4'];
// The longest prefix first: Illuminate\Support\ has roots of its own beside Illuminate\.
uksort($roots, fn ($a, $b) => strlen($b) <=> strlen($a));
spl_autoload_register(static function (string $class) use ($roots, $src): void {
    foreach ($roots as $prefix => $dirs) {
        if (!str_starts_with($class, $prefix)) {
            continue;
        }
        foreach ((array) $dirs as $dir) {
            $file = "$src/$dir" . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
            if (is_file($file)) {
                require $file;
                return;
            }
        }
    }
}, true, true);
foreach ($composer['autoload']['files'] ?? [] as $file) {
    require_once "$src/$file";
}
preg_match_all("~^require_once '(/usr/share/php/[^']+)'~m", (string) file_get_contents('/usr/share/php/Illuminate/autoload.php'), $found);
foreach ($found[1] as $file) {
    if (!str_starts_with($file, '/usr/share/php/Illuminate/')) {
        require_once $file;
    }
}
foreach (get_included_files() as $file) {
    if (str_starts_with($file, '/usr/share/php/Illuminate/')) {
        throw new LogicException("Laravel from $src, yet Debian's $file was loaded");
    }
}
