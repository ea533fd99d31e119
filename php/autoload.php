<?php
// Loads ephpm's Composer-side classes (Ephpm\Symfony\..., Ephpm\Laravel\...) without
// Composer, for code that uses Debian's packaged Symfony; composer.json maps the same.
spl_autoload_register(static function (string $class): void {
    if (str_starts_with($class, 'Ephpm\\') && is_file($file = __DIR__ . '/' . str_replace('\\', '/', substr($class, 6)) . '.php')) {
        require $file;
    }
});
