--TEST--
Ephpm\Symfony\StaleCacheAdapter passes the PSR-6 contract (cache/integration-tests' CachePoolTest, its 100-odd cases) as Ephpm\Symfony\EphpmAdapter does, under PHPUnit
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
    public function createCachePool(): Psr\Cache\CacheItemPoolInterface { return new Ephpm\Symfony\EphpmAdapter("contract-ephpm"); }
}');
file_put_contents("$dir/StaleCacheAdapterContractTest.php", $php . 'final class StaleCacheAdapterContractTest extends Cache\IntegrationTests\CachePoolTest {
    public function createCachePool(): Psr\Cache\CacheItemPoolInterface { return new Ephpm\Symfony\StaleCacheAdapter("contract-stale", 0, staleSeconds: 60); }
}');
foreach (['EphpmAdapter', 'StaleCacheAdapter'] as $class) {
    $cmd = sprintf('%s -d zend.assertions=1 -d extension=%s -d ephpm.store_name=phpt_pool_contract -d ephpm.shm_size=8M /usr/bin/phpunit --do-not-cache-result %s 2>&1',
        escapeshellarg(PHP_BINARY), escapeshellarg(getenv('EPHPM_SO') ?: 'ephpm'), escapeshellarg("$dir/{$class}ContractTest.php"));
    exec($cmd, $out, $rc);
    // The number of cases grows with cache/integration-tests' release: what counts is that
    // PHPUnit ran some and none failed.
    $ran = preg_match('/^(?:OK \((\d+) tests|Tests: (\d+))/m', implode("\n", $out), $m) ? (int) ($m[1] ?: $m[2]) : 0;
    printf("%s: %s (exit %d)\n", $class, $rc === 0 && $ran > 100 ? 'passed, more than 100 cases' : "$ran cases", $rc);
    if ($rc !== 0) {
        echo implode("\n", array_slice($out, 0, 60)), "\n";
    }
    $out = [];
}
array_map('unlink', glob("$dir/*"));
rmdir($dir);
--EXPECT--
EphpmAdapter: passed, more than 100 cases (exit 0)
StaleCacheAdapter: passed, more than 100 cases (exit 0)
