--TEST--
session_create_id() while a session is active returns a new id, reserved for its caller (another request's handler sees it taken), with the native handler and with Ephpm\SessionHandler; its own reservation is no collision, another request's is
--EXTENSIONS--
ephpm
session
--INI--
ephpm.store_name=phpt_session_create_id
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
--FILE--
<?php
ob_start(); // no output before the session functions: they refuse after headers
register_shutdown_function(fn () => ob_end_flush());
$other = new Ephpm\SessionHandler(); // another request, asking what is taken

function check(string $label, Ephpm\SessionHandler $other): void {
    session_start();
    $new = session_create_id();
    $prefixed = session_create_id('pfx-'); // PHP prefixes the handler's new id
    echo "$label: ", var_export(is_string($new) && strlen($new) === 32 && $new !== session_id(), true),
        ", taken for others: ", var_export($other->validateId($new), true),
        ", prefixed: ", var_export(preg_match('/^pfx-[a-zA-Z0-9,-]{32}$/', (string) $prefixed) === 1, true), "\n";
    session_destroy();
}

check('native', $other);
session_set_save_handler(new Ephpm\SessionHandler(), true);
check('object', $other);

echo "-- an id another handler reserved is a collision\n";
$mine = new Ephpm\SessionHandler();
$taken = $other->create_sid();
var_dump($mine->validateId($taken), $other->validateId($taken));
$other->close(); // the request ends: from now on its reservation is a collision for it too
var_dump($other->validateId($taken));
?>
--EXPECT--
native: true, taken for others: true, prefixed: true
object: true, taken for others: true, prefixed: true
-- an id another handler reserved is a collision
bool(true)
bool(false)
bool(true)
