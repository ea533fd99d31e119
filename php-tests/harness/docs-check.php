<?php
// The documents checked as code is: every relative link of README.md, ARCHITECTURE.md, SAFETY.md,
// CHANGELOG.md, bench/*.md and docs/*.md reaches a file and, with #anchor, a heading of
// it (GitHub's and mdBook's ids: lower case, punctuation dropped, spaces as hyphens);
// docs/SUMMARY.md names every page of docs/; every ```php run block runs with the
// extension, in a store of its own, without an error, warning or notice.
//   php -n docs-check.php ROOT path/to/ephpm.so
// Prints "ok - …" / "FAIL - …" lines and "docs: N passed, N failed, N skipped".
[, $root, $so] = $argv;
$passed = $failed = 0;
function check(bool $ok, string $what, string $why = ''): void
{
    global $passed, $failed;
    $ok ? $passed++ : $failed++;
    echo $ok ? "ok - $what\n" : "FAIL - $what" . ($why === '' ? '' : ": $why") . "\n";
}

/** The document's lines outside code fences, and its fenced blocks with their info strings. */
function parse(string $text): array
{
    $prose = [];
    $blocks = [];
    $fence = null;
    foreach (explode("\n", $text) as $line) {
        if ($fence === null && preg_match('/^```(.*)$/', $line, $m)) {
            $fence = ['info' => trim($m[1]), 'code' => ''];
        } elseif ($fence !== null && str_starts_with($line, '```')) {
            $blocks[] = $fence;
            $fence = null;
        } elseif ($fence !== null) {
            $fence['code'] .= $line . "\n";
        } else {
            $prose[] = $line;
        }
    }
    return [$prose, $blocks];
}

function anchors(string $file): array
{
    static $cache = [];
    if (!isset($cache[$file])) {
        $seen = [];
        foreach (parse(file_get_contents($file))[0] as $line) {
            if (preg_match('/^#{1,6}\s+(.*)$/', $line, $m)) {
                $slug = str_replace(' ', '-', preg_replace('/[^a-z0-9_\- ]/', '', strtolower(trim($m[1]))));
                // GitHub numbers a repeated heading's id: slug, slug-1, slug-2…
                $n = $seen[$slug] ?? 0;
                $seen[$slug] = $n + 1;
                $cache[$file][] = $n === 0 ? $slug : "$slug-$n";
            }
        }
        $cache[$file] ??= [];
    }
    return $cache[$file];
}

$documents = array_merge(
    ["$root/README.md", "$root/ARCHITECTURE.md", "$root/SAFETY.md", "$root/CHANGELOG.md"],
    glob("$root/bench/*.md"),
    glob("$root/docs/*.md"),
);
$runs = 0;
foreach ($documents as $doc) {
    $name = substr($doc, strlen($root) + 1);
    if (!is_file($doc)) {
        check(false, "$name exists");
        continue;
    }
    [$prose, $blocks] = parse(file_get_contents($doc));
    // Inline code is not a link, whatever it holds.
    $text = preg_replace('/`[^`]*`/', '', implode("\n", $prose));
    preg_match_all('/\]\(([^)\s]+)\)/', $text, $links);
    $bad = [];
    foreach (array_unique($links[1]) as $target) {
        if (preg_match('/^[a-z]+:/', $target)) {
            continue; // another site: not this project's to check
        }
        [$path, $anchor] = array_pad(explode('#', $target, 2), 2, null);
        $file = $path === '' ? $doc : dirname($doc) . '/' . $path;
        if (!file_exists($file)) {
            $bad[] = "$target (no such file)";
        } elseif ($anchor !== null && !in_array($anchor, anchors($file), true)) {
            $bad[] = "$target (no such heading)";
        }
    }
    check($bad === [], "every link of $name reaches its file and heading", implode(', ', $bad));
    foreach ($blocks as $i => $block) {
        if (!preg_match('/^php\s+run\b/', $block['info'])) {
            continue;
        }
        $runs++;
        $store = 'docs_' . getmypid() . "_$runs";
        $script = tempnam(sys_get_temp_dir(), 'docs');
        file_put_contents($script, (str_starts_with($block['code'], '<?php') ? '' : "<?php\n") . $block['code']);
        $php = sprintf(
            '%s -n -d %s -d ephpm.store_name=%s -d error_reporting=-1 -d display_errors=stderr',
            escapeshellarg(PHP_BINARY),
            escapeshellarg("extension=$so"),
            $store,
        );
        $proc = proc_open("$php " . escapeshellarg($script), [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        $rc = proc_close($proc);
        exec("$php -r " . escapeshellarg("ephpm_store_remove('$store');") . ' 2>&1');
        unlink($script);
        check(
            $rc === 0 && $err === '',
            "the php run block " . ($i + 1) . " of $name runs",
            "exit $rc, " . trim($err . ' ' . $out),
        );
    }
}

// Every page of the book is in its table of contents, and every entry there is a page.
$summary = file_get_contents("$root/docs/SUMMARY.md");
preg_match_all('/\]\(([^)]+\.md)\)/', $summary, $listed);
$pages = array_map('basename', glob("$root/docs/*.md"));
$missing = array_diff($pages, $listed[1], ['SUMMARY.md']);
check($missing === [], 'docs/SUMMARY.md lists every page of docs/', implode(', ', $missing));
check($runs > 0, 'the documents hold php run blocks (README\'s example among them)');
echo "docs: $passed passed, $failed failed, 0 skipped\n";
