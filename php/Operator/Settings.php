<?php

declare(strict_types=1);

namespace Ephpm\Operator;

/**
 * The `ephpm.*` settings in effect for this script (ini_get_all('ephpm')): the local
 * value, and the php.ini one where a pool or directory changed it. A secret is shown as
 * set or not, never its value; a DSN without its credentials.
 */
final class Settings
{
    public static function html(): string
    {
        $all = ini_get_all('ephpm');
        if (!is_array($all)) {
            return '';
        }
        $rows = '';
        foreach ($all as $name => $v) {
            $local = self::shown($name, (string) $v['local_value']);
            $global = self::shown($name, (string) $v['global_value']);
            $rows .= '<tr data-ini="' . Html::e($name) . '"><th>' . Html::e($name) . '</th><td data-metric="ini" data-value="'
                . Html::e($local) . '">' . Html::e($local) . '</td><td>' . ($global === $local ? '' : 'php.ini: ' . Html::e($global)) . '</td></tr>';
        }

        return Html::card('Settings (ephpm.*)', '<table class="list">' . $rows . '</table>', 'card wide');
    }

    private static function shown(string $name, string $value): string
    {
        return match (true) {
            str_ends_with($name, '.secret') => $value === '' ? '(not set)' : '(set)',
            str_ends_with($name, '.dsn') && $value !== '' => Escape::dsn($value),
            default => Escape::text($value),
        };
    }
}
