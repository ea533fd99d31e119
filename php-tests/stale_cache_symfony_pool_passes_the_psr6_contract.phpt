--TEST--
Ephpm\Symfony\StaleCacheAdapter passes the PSR-6 contract (cache/integration-tests' CachePoolTest, 123 cases) as Ephpm\Symfony\EphpmAdapter does, under PHPUnit
--DESCRIPTION--
PHPUnit needs extensions that `php -n` lacks (dom, mbstring, xml...), so the suite runs in
a child PHP with the system's php.ini and this extension; zend.assertions=1 because
Symfony validates keys in assert() on some paths, as its own test suite runs.
--EXTENSIONS--
ephpm
--SKIPIF--
<?php
if (!is_file('/usr/bin/phpunit')) die('skip phpunit is not installed');
if (!is_file('/usr/share/php/Cache/IntegrationTests/CachePoolTest.php')) die('skip php-cache-integration-tests is not installed');
if (!is_file('/usr/share/php/Symfony/Component/Cache/autoload.php')) die('skip php-symfony-cache is not installed');
--INI--
ephpm.store_name=phpt_pool_contract
ephpm.shm_size=8M
--FILE--
<?php
$dir = sys_get_temp_dir() . '/ephpm-contract-' . getmypid();
@mkdir($dir);
$php = '<?php
require_once "/usr/share/php/Cache/IntegrationTests/autoload.php";
require_once "/usr/share/php/Symfony/Component/Cache/autoload.php";
require_once ' . var_export(realpath(__DIR__ . '/../php/autoload.php'), true) . ';
';
file_put_contents("$dir/EphpmAdapterContractTest.php", $php . 'final class EphpmAdapterContractTest extends Cache\IntegrationTests\CachePoolTest {
    public function createCachePool() { return new Ephpm\Symfony\EphpmAdapter("contract-ephpm"); }
}');
file_put_contents("$dir/StaleCacheAdapterContractTest.php", $php . 'final class StaleCacheAdapterContractTest extends Cache\IntegrationTests\CachePoolTest {
    public function createCachePool() { return new Ephpm\Symfony\StaleCacheAdapter("contract-stale", 0, staleSeconds: 60); }
}');
foreach (['EphpmAdapter', 'StaleCacheAdapter'] as $class) {
    $cmd = sprintf('%s -d zend.assertions=1 -d extension=%s -d ephpm.store_name=phpt_pool_contract -d ephpm.shm_size=8M /usr/bin/phpunit --do-not-cache-result %s 2>&1',
        escapeshellarg(PHP_BINARY), escapeshellarg(getenv('EPHPM_SO') ?: 'ephpm'), escapeshellarg("$dir/{$class}ContractTest.php"));
    exec($cmd, $out, $rc);
    $last = array_values(array_filter($out, fn ($l) => preg_match('/^(OK|Tests:)/', $l)));
    printf("%s: %s (exit %d)\n", $class, $last[0] ?? implode("\n", array_slice($out, -20)), $rc);
    if ($rc !== 0) {
        echo implode("\n", array_slice($out, 0, 60)), "\n";
    }
    $out = [];
}
array_map('unlink', glob("$dir/*"));
rmdir($dir);
--EXPECT--
EphpmAdapter: OK (123 tests, 202 assertions) (exit 0)
StaleCacheAdapter: OK (123 tests, 202 assertions) (exit 0)
