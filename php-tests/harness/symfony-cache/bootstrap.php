<?php
// Autoloading for symfony-cache-suite.sh: cache/integration-tests and Debian's
// symfony/cache, ephpm's PHP classes, Symfony's cache tests (fetched into
// $EPHPM_SYMFONY_CACHE_TESTS) and the test classes beside this file.
require_once '/usr/share/php/Cache/IntegrationTests/autoload.php';
require_once '/usr/share/php/Symfony/Component/Cache/autoload.php';
require_once '/usr/share/php/Psr/SimpleCache/autoload.php';
require_once __DIR__ . '/../../../php/autoload.php';
spl_autoload_register(static function (string $class): void {
    $namespace = 'Symfony\\Component\\Cache\\Tests\\';
    if (str_starts_with($class, $namespace)) {
        $file = getenv('EPHPM_SYMFONY_CACHE_TESTS') . '/' . str_replace('\\', '/', substr($class, \strlen($namespace))) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});

/** The store the pools under test use: symfony-cache-suite.sh's redis-server, or the ini's shm store. */
function ephpm_test_dsn(): ?string
{
    return getenv('EPHPM_TEST_DSN') ?: null;
}
