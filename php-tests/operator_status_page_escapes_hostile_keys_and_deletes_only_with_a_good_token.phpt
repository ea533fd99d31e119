--TEST--
The status page and the metrics on every store: keys with NUL, control bytes and markup are shown escaped (never raw) and are deleted exactly by the key browser, only by a POST with a good token from the page (none, a wrong one, or one from another site deletes nothing); every metric carries the store label; the rates of a refresh are measured since the look it refreshes
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_operator_page
ephpm.shm_size=4M
--FILE--
<?php
require dirname(__DIR__) . '/php/autoload.php';

use Ephpm\Operator\Metrics;
use Ephpm\Operator\Section\Keys;
use Ephpm\Operator\Snapshot;
use Ephpm\Operator\StatusPage;

// Buffered, so that the delete's status line and Location header can still be set.
ob_start();
$kv = new Ephpm\Kv();
$kv->clear();
$hostile = ["tag\0\x01:t", "<script>alert(1)</script>:x", "tag\0\x02:t"];
foreach ($hostile as $i => $key) {
    $kv->set($key, str_repeat('<b>', 100 + $i), 300);
}
$kv->set('big:1', str_repeat('x', 5000));
$kv->set('42', 'a key PHP would make an int');

$page = (new StatusPage(['store' => '0', 'find' => 'tag']))->render(Snapshot::configured());
$numeric = (new StatusPage(['store' => '0', 'find' => '4']))->render(Snapshot::configured());
echo 'a key of digits in the browser: ', str_contains($numeric, '<tr data-key="' . bin2hex('42') . '">') ? 'right' : 'wrong', "\n";
echo 'no raw NUL or control byte: ', preg_match('/[\x00-\x08\x0b\x0c\x0e-\x1f]/', $page) ? 'wrong' : 'right', "\n";
echo 'no markup from a key or value: ', str_contains($page, '<script>') || str_contains($page, '<b>') ? 'wrong' : 'right', "\n";
echo 'the keys, escaped: ', substr_count($page, 'tag\x00\x01:t') >= 1 && substr_count($page, 'tag\x00\x02:t') >= 1
    && str_contains($page, '&lt;script&gt;alert(1)&lt;/script&gt;') ? 'right' : 'wrong', "\n";
echo 'the largest entry first: ', preg_match('~data-largest="0"><td class="key">big:1</td>~', $page) ? 'right' : 'wrong', "\n";
preg_match_all('~<tr data-key="([0-9a-f]*)">~', $page, $m);
echo 'the browser lists exactly the keys under "tag", in hex: ', $m[1] === [bin2hex("tag\0\x01:t"), bin2hex("tag\0\x02:t")] ? 'right' : var_export($m[1], true), "\n";
preg_match('~name="token" value="([^"]*)"~', $page, $t);
$token = $t[1] ?? '';

$delete = static function (array $post, array $server = []): string {
    ob_start();
    Keys::delete(Snapshot::dsns(), ['store' => '0', 'find' => 'tag'], $post, $server);
    return rtrim(http_response_code() . ' ' . trim((string) ob_get_clean()));
};
$key = bin2hex("tag\0\x01:t");
echo 'no token: ', $delete(['key' => $key]), "\n";
echo 'a wrong token: ', substr($delete(['key' => $key, 'token' => substr($token, 0, -1) . (str_ends_with($token, '0') ? '1' : '0')]), 0, 3), "\n";
echo 'a good token from another site: ', substr($delete(['key' => $key, 'token' => $token], ['HTTP_ORIGIN' => 'https://evil.example', 'HTTP_HOST' => 'ops.example']), 0, 3), "\n";
echo 'a good token, sent cross-site: ', substr($delete(['key' => $key, 'token' => $token], ['HTTP_SEC_FETCH_SITE' => 'cross-site']), 0, 3), "\n";
echo 'still there: ', var_export($kv->has("tag\0\x01:t"), true), "\n";
http_response_code(200);
echo 'a good token: ', $delete(['key' => $key, 'token' => $token], ['HTTP_ORIGIN' => 'https://ops.example', 'HTTP_HOST' => 'ops.example']), "\n";
echo 'gone, and only it: ', var_export([$kv->has("tag\0\x01:t"), $kv->has("tag\0\x02:t")], true), "\n";

$metrics = (new Metrics())->render(Snapshot::configured());
$samples = preg_grep('/^[a-z]/', explode("\n", $metrics));
$labelled = preg_grep('/^[a-z_]+\{store="[^"]+"/', $samples);
echo 'every sample has a store label: ', count($samples) > 20 && $labelled === $samples ? 'right' : 'wrong', "\n";
echo 'ephpm_up: ', preg_match('/^ephpm_up\{store="[^"]+"\} 1$/m', $metrics), "\n";
echo 'the scrape is UTF-8 with no control byte: ', preg_match('//u', $metrics) === 1 && !preg_match('/[\x00-\x09\x0b-\x1f]/', $metrics) ? 'right' : 'wrong', "\n";

// ?refresh=N reloads the page every N seconds (bounded), with this look in its URL; the
// next page measures its rates from that look.
$refresh = static function (array $get): string {
    $html = (new StatusPage($get))->render(Snapshot::configured());
    return preg_match('~<meta http-equiv="refresh" content="([0-9]+); url=([^"]*)">~', $html, $m) ? $m[1] . ' ' . html_entity_decode($m[2]) : 'none';
};
echo 'refresh=1, 99999, x, absent: ', implode(', ', array_map(fn ($n) => strtok($refresh($n === null ? [] : ['refresh' => $n]), ' '), ['1', '99999', 'x', null])), "\n";
[, $url] = explode(' ', $refresh(['refresh' => '5']), 2);
parse_str((string) parse_url($url, PHP_URL_QUERY), $query);
for ($i = 0; $i < 7; $i++) {
    $kv->get('big:1');
}
$next = (new StatusPage($query))->render(Snapshot::configured());
preg_match('~data-metric="hits_per_second" data-value="[^"]*" data-delta="([0-9]+)"~', $next, $hits);
preg_match('~data-metric="rate_basis" data-value="([a-z]*)"~', $next, $basis);
// Exactly the 7 gets on shm; Redis counts the page's own walk (PTTL, STRLEN) as hits
// too; on cluster:// the counters are the host node's, which this process's lock-free
// reads of the host copy reach only when it next holds their shard's lock (tally.rs).
$backend = $kv->stats()['backend'];
$delta = (int) ($hits[1] ?? -1);
$right = match (true) {
    str_starts_with($backend, 'shm') => $delta === 7,
    str_starts_with($backend, 'cluster') => $delta >= 0,
    default => $delta >= 7,
};
echo 'the reload keeps refreshing every ', $query['refresh'] ?? '?', ' s; its rates are since the previous look: ', $basis[1] ?? '?',
    ', hits +7', $right ? '' : " (got $delta)", "\n";
$forged = (new StatusPage(['since' => 'bm90IGpzb24']))->render(Snapshot::configured());
preg_match('~data-metric="rate_basis" data-value="([a-z]*)"~', $forged, $basis);
echo 'a since that is not one: ', $basis[1] ?? '?', "\n";

// A store is named by its DSN without its password, wherever the password is written.
foreach (['redis://user:pw@h:6379/0?prefix=a&pass=pw2&timeout=1', "redis-cluster://:pw@a,b", 'shm://'] as $dsn) {
    echo Ephpm\Operator\Snapshot::name($dsn), "\n";
}
--EXPECT--
a key of digits in the browser: right
no raw NUL or control byte: right
no markup from a key or value: right
the keys, escaped: right
the largest entry first: right
the browser lists exactly the keys under "tag", in hex: right
no token: 403 ephpm: the form's token is missing, wrong or too old, or the request came from another site; nothing was deleted (reload the page and try again)
a wrong token: 403
a good token from another site: 403
a good token, sent cross-site: 403
still there: true
a good token: 303
gone, and only it: array (
  0 => false,
  1 => true,
)
every sample has a store label: right
ephpm_up: 1
the scrape is UTF-8 with no control byte: right
refresh=1, 99999, x, absent: 2, 3600, none, none
the reload keeps refreshing every 5 s; its rates are since the previous look: previous, hits +7
a since that is not one: start
redis://***@h:6379/0?prefix=a&pass=***&timeout=1
redis-cluster://***@a,b
shm://phpt_operator_page
