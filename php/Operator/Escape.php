<?php

declare(strict_types=1);

namespace Ephpm\Operator;

/**
 * Bytes any client may have chosen (keys, prefixes, DSNs) made safe to show: as text
 * that is valid UTF-8 and carries no control character, and DSNs without their
 * credentials. HTML escaping comes after this (Html::key()); Prometheus' label escaping
 * too (Metrics).
 */
final class Escape
{
    /**
     * Runs of text shown as they are: printable ASCII but the backslash, and
     * well-formed UTF-8 sequences but the C1 controls (U+0080-U+009F); else one byte.
     */
    private const TEXT = '/[\x20-\x5b\x5d-\x7e]+'
        . '|(?:\xc2[\xa0-\xbf]|[\xc3-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]'
        . '|[\xe1-\xec\xee\xef][\x80-\xbf]{2}|\xed[\x80-\x9f][\x80-\xbf]'
        . '|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}|\xf4[\x80-\x8f][\x80-\xbf]{2})+'
        . '|(.)/s';

    /**
     * Bytes as text: kept where they are printable UTF-8, a backslash doubled, and any
     * other byte (a control character such as NUL, a byte of invalid UTF-8) written
     * `\xNN`. Since every backslash of the text starts an escape, two different byte
     * strings never show as one (Symfony's tag keys differ by a NUL byte). A label of
     * Prometheus, which takes only UTF-8 and rejects the whole scrape otherwise, is this
     * text too.
     */
    public static function text(string $bytes): string
    {
        return (string) preg_replace_callback(
            self::TEXT,
            static fn (array $m): string => !isset($m[1]) ? $m[0]
                : ($m[1] === '\\' ? '\\\\' : sprintf('\\x%02x', ord($m[1]))),
            $bytes,
        );
    }

    /**
     * A DSN as it may be shown (page, metrics label): the user and password of
     * `scheme://user:pass@host` and a `pass=` parameter (src/ground/dsn.rs passes it to
     * Redis) replaced by `***`, and `shm://` named by the store `ephpm.store_name` makes
     * it mean.
     */
    public static function dsn(string $dsn): string
    {
        if ($dsn === 'shm://') {
            $dsn .= (string) ini_get('ephpm.store_name');
        }

        return self::text((string) preg_replace(
            ['~\A([A-Za-z][A-Za-z0-9+.-]*://)[^/@?#]*@~', '~([?&]pass=)[^&#]*~'],
            ['$1***@', '$1***'],
            $dsn,
        ));
    }
}
