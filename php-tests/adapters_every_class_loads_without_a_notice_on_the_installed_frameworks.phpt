--TEST--
Every class, trait and interface under php/ loads on the Symfony, Laravel and PHP this system has (Symfony 7 wants `: void` on a lock store, Laravel 13 a touch(), Laravel 12 flexible(…, $alwaysDefer)), each in a process of its own with error_reporting=E_ALL, and says nothing: no fatal error, no deprecation
--EXTENSIONS--
ephpm
--SKIPIF--
<?php if (!is_file('/usr/share/php/Illuminate/Cache/autoload.php') && !is_file('/usr/share/php/Symfony/Component/Lock/autoload.php')) die('skip neither php-illuminate-cache nor php-symfony-lock is installed');
--FILE--
<?php
// A class whose declaration does not match its parent is a compile-time fatal error that
// ends the process, so each class is declared in a child: the parent's report is the
// child's whole output.
$root = dirname(__DIR__) . '/php';
$names = [];
$files = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($root, FilesystemIterator::SKIP_DOTS));
foreach ($files as $file) {
    $source = file_get_contents($file->getPathname());
    if (preg_match('/^namespace (\S+);/m', $source, $ns)
        && preg_match('/^(?:final |abstract )?(?:class|trait|interface) (\w+)/m', $source, $decl)) {
        $names[] = $ns[1] . '\\' . $decl[1];
    }
}
// A system without one of the frameworks (Debian experimental has Symfony 8, no Laravel)
// checks the other's adapters.
$absent = array_filter([
    'Ephpm\\Laravel\\' => !is_file('/usr/share/php/Illuminate/Cache/autoload.php'),
    'Ephpm\\Symfony\\' => !is_file('/usr/share/php/Symfony/Component/Lock/autoload.php'),
]);
$names = array_filter($names, function ($name) use ($absent) {
    foreach (array_keys($absent) as $prefix) {
        if (str_starts_with($name, $prefix)) {
            return false;
        }
    }
    return true;
});
sort($names);
// Every framework autoloader Debian installed (the adapters' parents come from several),
// Laravel's through the tests' loader (a release branch's checkout with EPHPM_LARAVEL_SRC).
$load = <<<'PHP'
foreach (glob('/usr/share/php/{Symfony/Component,Symfony/Bridge,Symfony/Bundle,Symfony/Contracts}/*/autoload.php', GLOB_BRACE) as $f) require_once $f;
if (is_file('/usr/share/php/Illuminate/autoload.php')) require $argv[1] . '/../php-tests/harness/laravel-autoload.php';
else foreach (glob('/usr/share/php/Illuminate/*/autoload.php') as $f) require_once $f;
require $argv[1] . '/autoload.php';
$name = $argv[2];
echo (class_exists($name) || trait_exists($name) || interface_exists($name)) ? "ok\n" : "not found\n";
PHP;
$php = [PHP_BINARY, '-n', '-d', 'extension=' . getenv('EPHPM_SO'), '-d', 'error_reporting=' . E_ALL,
        '-d', 'display_errors=stdout', '-d', 'ephpm.store_name=phpt_adapters', '-d', 'extension=mbstring', '-d', 'extension=ctype'];
$bad = 0;
foreach ($names as $name) {
    $child = proc_open([...$php, '-r', $load, $root, $name], [1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes);
    $said = trim(stream_get_contents($pipes[1]));
    proc_close($child);
    if ($said !== 'ok') {
        $bad++;
        echo "$name: ", strtok($said, "\n"), "\n";
    }
}
echo count($names) > 40 ? "classes: many\n" : "classes: only " . count($names) . "\n";
echo "failed to load cleanly: $bad\n";
?>
--EXPECT--
classes: many
failed to load cleanly: 0
