<?php

declare(strict_types=1);

namespace Ephpm\Operator\Section;

use Ephpm\Kv;
use Ephpm\KvIterator;
use Ephpm\Operator\Csrf;
use Ephpm\Operator\Escape;
use Ephpm\Operator\Html;
use Ephpm\Operator\Section;
use Ephpm\Operator\Snapshot;

/**
 * The key browser: the keys that start with a prefix (`?store=N&find=PREFIX`; the
 * prefix is bytes, as the URL carries them), each with its TTL, size and, for a held
 * lock, its fence, and a button that deletes that one key.
 *
 * Keys are shown as Escape::text() makes them (a NUL byte as `\x00`, never raw) and are
 * addressed by their bytes in hex, so a key with control bytes is deleted exactly. A
 * delete is a POST with a Csrf token, behind the same access rule as the page (the
 * entry script checks Access first); a GET never deletes.
 */
final class Keys implements Section
{
    /** Keys listed for one prefix (sorted; past it the page says there are more). */
    public const LISTED = 100;

    /**
     * @param ?int $store the store browsed (its index on the page), null: none
     * @param ?array{key: string, deleted: bool} $done the delete the page reports
     */
    public function __construct(private ?int $store, private string $find, private ?array $done)
    {
    }

    /** @param array<string, mixed> $get $_GET */
    public static function fromQuery(array $get): self
    {
        $store = is_string($get['store'] ?? null) && preg_match('/\A[0-9]{1,9}\z/', $get['store']) === 1 ? (int) $get['store'] : null;
        $find = isset($get['find']) && is_string($get['find']) ? $get['find'] : '';
        $key = isset($get['deleted']) && is_string($get['deleted']) ? self::unhex($get['deleted']) : null;

        return new self($store, $find, $key === null ? null : ['key' => $key, 'deleted' => ($get['found'] ?? '') === '1']);
    }

    public function html(Snapshot $s, int $index): string
    {
        $shown = $this->store === $index ? $this->find : '';
        $form = '<form method="get" class="find"><input type="hidden" name="store" value="' . $index . '">'
            . '<label>keys starting with <input name="find" value="' . (Escape::text($shown) === $shown ? Html::e($shown) : '')
            . '" size="30"></label> <button>find</button></form>';
        if ($this->store !== $index || $s->kv === null) {
            return Html::card('Keys', $form, 'card wide');
        }
        $keys = [];
        $more = false;
        foreach (new KvIterator($s->kv, $this->find) as $key => $entry) {
            if (count($keys) === self::LISTED) {
                $more = true;
                break;
            }
            $keys[] = [(string) $key, $entry];
        }
        // A list, not an array keyed by key: PHP would make a key such as "42" an int.
        usort($keys, static fn (array $a, array $b): int => strcmp($a[0], $b[0]));
        $token = (new Csrf($s->kv, $s->store))->token();
        $action = Html::e('?' . http_build_query(['store' => $index, 'find' => $this->find]));
        $rows = '';
        foreach ($keys as [$key, $e]) {
            $rows .= '<tr data-key="' . bin2hex($key) . '"><td class="key">' . Html::key($key) . '</td><td>' . Html::ttl($e['ttl']) . '</td>'
                . Html::bytes('size', $e['size']) . '<td>' . ($e['fence'] === null ? '' : 'lock, fence ' . $e['fence']) . '</td>'
                . '<td><form method="post" action="' . $action . '"><input type="hidden" name="key" value="' . bin2hex($key) . '">'
                . '<input type="hidden" name="token" value="' . $token . '"><button class="delete">delete</button></form></td></tr>';
        }
        $done = $this->done === null ? '' : '<p class="notice" data-metric="deleted" data-value="' . ($this->done['deleted'] ? 1 : 0) . '">'
            . Html::key($this->done['key']) . ($this->done['deleted'] ? ' was deleted.' : ' was not there.') . '</p>';
        $found = '<p class="note" data-metric="found" data-value="' . count($keys) . '">' . count($keys)
            . ($more ? '+ keys (the first ' . self::LISTED . ' found, sorted)' : ' keys') . ' starting with "' . Html::key($this->find) . '".</p>';

        return Html::card('Keys', $form . $done . $found . ($rows === '' ? '' : '<table class="list"><tr><th>key</th><th>TTL left</th>'
            . '<th>size</th><th></th><th></th></tr>' . $rows . '</table>'), 'card wide');
    }

    /**
     * Answers a POST: deletes the key it names from the store `?store=N` names if its
     * token is good (303 back to the list), else 400 (no such store, no key) or 403 (the
     * token is missing, wrong or old, or the request comes from another site) and
     * deletes nothing.
     *
     * @param list<?string> $dsns the page's stores (Snapshot::dsns())
     * @param array<string, mixed> $get $_GET
     * @param array<string, mixed> $post $_POST
     * @param array<string, mixed> $server $_SERVER
     */
    public static function delete(array $dsns, array $get, array $post, array $server): void
    {
        $view = self::fromQuery($get);
        $key = is_string($post['key'] ?? null) ? self::unhex($post['key']) : null;
        if ($view->store === null || !array_key_exists($view->store, $dsns) || $key === null || $key === '') {
            self::refuse(400, 'ephpm: a delete names a store (?store=N) and a key (hex); nothing was deleted');

            return;
        }
        $dsn = $dsns[$view->store];
        $kv = new Kv($dsn);
        if (!(new Csrf($kv, Snapshot::name($dsn)))->valid($post['token'] ?? null, $server)) {
            self::refuse(403, 'ephpm: the form\'s token is missing, wrong or too old, or the request came from another site; nothing was deleted (reload the page and try again)');

            return;
        }
        $deleted = $kv->delete($key);
        http_response_code(303);
        header('Location: ?' . http_build_query(['store' => $view->store, 'find' => $view->find, 'deleted' => bin2hex($key), 'found' => $deleted ? 1 : 0]));
    }

    private static function refuse(int $status, string $why): void
    {
        http_response_code($status);
        header('Content-Type: text/plain; charset=utf-8');
        echo $why, "\n";
    }

    private static function unhex(string $hex): ?string
    {
        return preg_match('/\A(?:[0-9a-fA-F]{2})*\z/', $hex) === 1 ? (string) hex2bin($hex) : null;
    }
}
