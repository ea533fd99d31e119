--TEST--
Session ids PHP's own handlers refuse (../../x, a NUL, bytes that are not UTF-8, a semicolon, 10 KB) never become keys: Ephpm\SessionHandler's read() and write() refuse them with a warning, validateId() says no; the native handler fails session_start() as the files handler does, and in strict mode hands out a new id
--EXTENSIONS--
ephpm
session
--INI--
ephpm.store_name=phpt_session_invalid_ids
ephpm.shm_size=4M
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
--FILE--
<?php
ob_start(); // no output before the session functions: they refuse after headers
register_shutdown_function(fn () => ob_end_flush());
$kv = new Ephpm\Kv();
$kv->clear();
$odd = ['../../x', "a\0b", "\xff\xfe", 'abc;def', str_repeat('a', 10240), str_repeat('b', 257)];
$show = fn (string $id) => strlen($id) > 20 ? strlen($id) . ' bytes' : var_export(bin2hex($id), true);

echo "-- Ephpm\\SessionHandler\n";
$h = new Ephpm\SessionHandler();
$h->read('../../x');
foreach ($odd as $id) {
    printf("%s: read %s, write %s, updateTimestamp %s, validateId %s, destroy %s\n", $show($id),
        var_export(@$h->read($id), true), var_export(@$h->write($id, 'user|s:1:"x";'), true),
        var_export(@$h->updateTimestamp($id, ''), true), var_export($h->validateId($id), true),
        var_export($h->destroy($id), true));
    $h->close();
}
$longest = str_repeat('Az09,-', 42) . 'Az09'; // 256 characters, all of them allowed
printf("the longest valid id: read %s, write %s, exists %s\n", var_export($h->read($longest), true),
    var_export($h->write($longest, 'n|i:1;'), true), var_export($h->close() && $h->validateId($longest), true));

echo "-- session.save_handler=ephpm, strict mode off: session_start() fails\n";
foreach ($odd as $id) {
    session_id($id);
    printf("%s: %s\n", $show($id), var_export(@session_start(), true));
}
session_id('../../x');
session_start();

echo "-- strict mode on: a new id instead\n";
ini_set('session.use_strict_mode', '1');
foreach ($odd as $id) {
    session_id($id);
    session_start();
    printf("%s: new id %s\n", $show($id), var_export(session_id() !== $id && strlen(session_id()) === 32, true));
    session_write_close();
}

echo "-- the keys in the store\n";
$keys = [];
foreach (new Ephpm\KvIterator($kv) as $key => $info) {
    $keys[] = $key === "session:$longest" ? 'session:<the longest valid id>'
        : preg_replace('~^session:[0-9a-f]{32}$~', 'session:<new id>', $key);
}
sort($keys);
print_r(array_count_values($keys));
?>
--EXPECTF--
-- Ephpm\SessionHandler

Warning: Ephpm\SessionHandler::read(): ephpm: the session id is too long or contains illegal characters: only the A-Z, a-z, 0-9, "-" and "," characters are allowed, at most 256 of them in %s on line %d
'2e2e2f2e2e2f78': read false, write false, updateTimestamp false, validateId false, destroy true
'610062': read false, write false, updateTimestamp false, validateId false, destroy true
'fffe': read false, write false, updateTimestamp false, validateId false, destroy true
'6162633b646566': read false, write false, updateTimestamp false, validateId false, destroy true
10240 bytes: read false, write false, updateTimestamp false, validateId false, destroy true
257 bytes: read false, write false, updateTimestamp false, validateId false, destroy true
the longest valid id: read '', write true, exists true
-- session.save_handler=ephpm, strict mode off: session_start() fails
'2e2e2f2e2e2f78': false
'610062': false
'fffe': false
'6162633b646566': false
10240 bytes: false
257 bytes: false

Warning: session_start(): ephpm: the session id is too long or contains illegal characters: only the A-Z, a-z, 0-9, "-" and "," characters are allowed, at most 256 of them in %s on line %d

Warning: session_start(): Failed to read session data: ephpm (path: %S) in %s on line %d
-- strict mode on: a new id instead
'2e2e2f2e2e2f78': new id true
'610062': new id true
'fffe': new id true
'6162633b646566': new id true
10240 bytes: new id true
257 bytes: new id true
-- the keys in the store
Array
(
    [session:<new id>] => 6
    [session:<the longest valid id>] => 1
)
