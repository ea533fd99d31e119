--TEST--
Ephpm\Symfony\Lock\EphpmStore passes symfony/lock's own store tests (Symfony\Component\Lock\Test\AbstractStoreTestCase, which php-symfony-lock ships from Symfony 7), under PHPUnit; a store whose delete() leaves the lock fails them
--DESCRIPTION--
PHPUnit needs extensions that `php -n` lacks (dom, mbstring, xml...), so the suite runs in
a child PHP with the system's php.ini and this extension. Debian 12's Symfony 5.4 and
Debian 13's 6.4 do not ship the test case: there it skips.
--EXTENSIONS--
ephpm
--SKIPIF--
<?php
if (!is_file('/usr/bin/phpunit')) die('skip phpunit is not installed');
if (!is_file('/usr/share/php/Symfony/Component/Lock/Test/AbstractStoreTestCase.php')) die('skip this php-symfony-lock ships no Test/AbstractStoreTestCase (Symfony 7 and later do)');
--INI--
ephpm.store_name=phpt_lock_contract
ephpm.shm_size=8M
--FILE--
<?php
$dir = sys_get_temp_dir() . '/ephpm-lock-contract-' . getmypid();
@mkdir($dir);
$php = '<?php
require_once "/usr/share/php/Symfony/Component/Lock/autoload.php";
require_once ' . var_export(realpath(__DIR__ . '/../php/autoload.php'), true) . ';
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\PersistingStoreInterface;
';
file_put_contents("$dir/EphpmStoreContractTest.php", $php . 'final class EphpmStoreContractTest extends Symfony\Component\Lock\Test\AbstractStoreTestCase {
    protected function getStore(): PersistingStoreInterface { return new Ephpm\Symfony\Lock\EphpmStore(); }
}');
// The counter-proof: the same store, but its delete() keeps the lock.
file_put_contents("$dir/KeepingStoreContractTest.php", $php . 'final class KeepingStoreContractTest extends Symfony\Component\Lock\Test\AbstractStoreTestCase {
    protected function getStore(): PersistingStoreInterface {
        return new class implements PersistingStoreInterface {
            private Ephpm\Symfony\Lock\EphpmStore $store;
            public function __construct() { $this->store = new Ephpm\Symfony\Lock\EphpmStore(); }
            public function save(Key $key): void { $this->store->save($key); }
            public function delete(Key $key): void {}
            public function exists(Key $key): bool { return $this->store->exists($key); }
            public function putOffExpiration(Key $key, float $ttl): void { $this->store->putOffExpiration($key, $ttl); }
        };
    }
}');
foreach (['EphpmStore', 'KeepingStore'] as $class) {
    $cmd = sprintf('%s -d extension=%s -d ephpm.store_name=phpt_lock_contract -d ephpm.shm_size=8M /usr/bin/phpunit --do-not-cache-result %s 2>&1',
        escapeshellarg(PHP_BINARY), escapeshellarg(getenv('EPHPM_SO') ?: 'ephpm'), escapeshellarg("$dir/{$class}ContractTest.php"));
    exec($cmd, $out, $rc);
    $text = implode("\n", $out);
    $ran = preg_match('/^(?:OK \((\d+) tests?|Tests: (\d+))/m', $text, $m) ? (int) ($m[1] ?: $m[2]) : 0;
    $failures = preg_match('/Failures: (\d+)/', $text, $f) ? (int) $f[1] : 0;
    printf("%s: %s\n", $class, $rc === 0 && $ran >= 5 ? 'passed, 5 cases or more' : "$ran cases, " . ($failures > 0 ? 'some failed' : "exit $rc"));
    if ($rc !== 0 && $class === 'EphpmStore') {
        echo implode("\n", array_slice($out, 0, 60)), "\n";
    }
    $out = [];
}
array_map('unlink', glob("$dir/*"));
rmdir($dir);
?>
--EXPECTF--
EphpmStore: passed, 5 cases or more
KeepingStore: %d cases, some failed
