<?php

declare(strict_types=1);

namespace Ephpm\Operator;

/**
 * The headers every answer of the status page and the metrics carries, refusals
 * included: never cached, never framed by another site (a framed page of the operator's
 * under a decoy is clickjacking: `frame-ancestors` for browsers that read CSP,
 * X-Frame-Options for those that do not), never sniffed as another type, no referrer,
 * and a CSP that loads nothing. The status page widens the CSP only for its inline CSS
 * and data: images (StatusPage::headers()).
 */
final class Headers
{
    public const CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

    public static function send(): void
    {
        header('Cache-Control: no-store');
        header('Content-Security-Policy: ' . self::CSP);
        header('X-Frame-Options: DENY');
        header('X-Content-Type-Options: nosniff');
        header('Referrer-Policy: no-referrer');
    }
}
