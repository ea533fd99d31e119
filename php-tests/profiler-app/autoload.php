<?php
// Debian's Symfony 5.4 (no Composer), ephpm's PHP classes and this application's kernel.
require_once '/usr/share/php/Symfony/Bundle/FrameworkBundle/autoload.php';
// What an application installed by Composer 2 has: Symfony 7's FrameworkBundle asks
// Composer\InstalledVersions which packages are there (Debian's composer package ships it).
if (is_file('/usr/share/php/Composer/InstalledVersions.php')) {
    require_once '/usr/share/php/Composer/InstalledVersions.php';
}
require_once '/usr/share/php/Symfony/Bundle/TwigBundle/autoload.php';
require_once '/usr/share/php/Symfony/Bundle/WebProfilerBundle/autoload.php';
require_once '/usr/share/php/Symfony/Component/Lock/autoload.php';
require_once '/usr/share/php/Symfony/Component/Yaml/autoload.php';
require_once __DIR__ . '/../../php/autoload.php';
require_once __DIR__ . '/ProfilerKernel.php';
