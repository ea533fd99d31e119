<?php
// Loads ephpm's Composer-side classes (Ephpm\Symfony\..., Ephpm\Laravel\...) without
// Composer, for code that uses Debian's packaged Symfony; composer.json maps the same.
spl_autoload_register(static function (string $class): void {
    if (str_starts_with($class, 'Ephpm\\') && is_file($file = __DIR__ . '/' . str_replace('\\', '/', substr($class, 6)) . '.php')) {
        require $file;
    }
});
// Symfony's cache wraps a computed item's value and metadata in a class named "\xA9"
// (Symfony/Component/Cache/Traits/ValueWrapper.php), which the classmap of Debian's
// php-symfony-cache 7.4 leaves out: without it every pool's get() with a callback is a
// fatal error, ephpm's or Symfony's own. It lies beside CacheItem, which needs it.
spl_autoload_register(static function (string $class): void {
    if ($class === "\xA9" && class_exists(\Symfony\Component\Cache\CacheItem::class, false)
        && is_file($file = dirname((new \ReflectionClass(\Symfony\Component\Cache\CacheItem::class))->getFileName()) . '/Traits/ValueWrapper.php')) {
        require_once $file;
    }
});
