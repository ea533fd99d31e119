<?php
// The test application: a real Illuminate\Foundation\Application on Debian's Laravel (8.83 here, 13 in
// the newest system of php-tests/systems).
// Its base folder is LARAVEL_BASE (the suite makes one in its temporary folder, holding
// storage/, bootstrap/cache/ and links to config/ and routes/ here), so nothing is ever
// written into the repository. EPHPM_PHP_DIR swaps in another copy of ephpm's php/
// (to run the suite against an older integration and see what it fails).
require_once __DIR__ . '/../../harness/laravel-autoload.php';
require_once (getenv('EPHPM_PHP_DIR') ?: __DIR__ . '/../../../php') . '/autoload.php';
spl_autoload_register(static function (string $class): void {
    if (str_starts_with($class, 'App\\') && is_file($file = __DIR__ . '/../app/' . str_replace('\\', '/', substr($class, 4)) . '.php')) {
        require $file;
    }
});

$app = new Illuminate\Foundation\Application(getenv('LARAVEL_BASE') ?: dirname(__DIR__));
// Laravel 11 and later merge the framework's own config/ under the application's; this
// application's config/ is whole, and Debian's Laravel 13 keeps the framework's config/
// where that merge does not look (Illuminate/config, not four folders above Bootstrap/).
if (method_exists($app, 'dontMergeFrameworkConfiguration')) {
    $app->dontMergeFrameworkConfiguration();
}
$app->singleton(Illuminate\Contracts\Http\Kernel::class, App\Http\Kernel::class);
$app->singleton(Illuminate\Contracts\Debug\ExceptionHandler::class, Illuminate\Foundation\Exceptions\Handler::class);
return $app;
