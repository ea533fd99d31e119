--TEST--
Ephpm\SessionHandler's $options: keys and strings are bytes (a key with "\0" or "\xe9" is named, escaped, in a ValueError), every number is range-checked with PHP's wording (PHP_INT_MAX, 1e20, INF, NAN, -1), never a Rust panic; the limits themselves and huge lifetimes work
--EXTENSIONS--
ephpm
session
--INI--
ephpm.store_name=phpt_session_options
--FILE--
<?php
$try = function (array $options): void {
    try {
        $h = new Ephpm\SessionHandler(null, $options);
        $ok = $h->read('opt') === '' && $h->write('opt', 'a|i:1;') && $h->close() && $h->destroy('opt');
        echo $ok ? "accepted\n" : "accepted, but the session failed\n";
    } catch (Throwable $e) {
        echo get_class($e), ': ', $e->getMessage(), "\n";
    }
};
echo "-- keys are bytes\n";
$try(["\0lock_wait" => 1]);
$try(["lock_wait\xe9" => 1]);
$try(["\xe9" => 1]);
$try([5 => 1]);
echo "-- numbers are range-checked\n";
foreach ([PHP_INT_MAX, 1e20, 1000000001, INF, -INF, NAN, -1, -0.5] as $n) {
    $try(['lock_wait' => $n]);
    $try(['lock_ttl' => $n]);
}
$try(['lifetime' => -1]);
echo "-- types\n";
$try(['lock_wait' => '1']);
$try(['locking' => 1]);
$try(['lifetime' => 1.5]);
$try(['lock_timeout' => "fail\0"]);
$try(['lock_timeout' => "\xe9"]);
echo "-- the limits work\n";
$try(['lock_wait' => 1000000000, 'lock_ttl' => 1000000000]);
$try(['lock_wait' => 0, 'lock_ttl' => 0, 'lifetime' => 0]);
$try(['lifetime' => PHP_INT_MAX, 'lock_timeout' => 'fail', 'locking' => false]);
$x = 2;
$try(['lock_wait' => &$x]);
?>
--EXPECT--
-- keys are bytes
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) contains an unrecognized key "\x00lock_wait"
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) contains an unrecognized key "lock_wait\xe9"
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) contains an unrecognized key "\xe9"
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) cannot contain numeric keys
-- numbers are range-checked
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_wait" must be between 0 and 1000000000
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_ttl" must be between 0 and 1000000000
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_wait" must be between 0 and 1000000000
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_ttl" must be between 0 and 1000000000
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_wait" must be between 0 and 1000000000
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_ttl" must be between 0 and 1000000000
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_wait" must be a finite number
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_ttl" must be a finite number
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_wait" must be a finite number
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_ttl" must be a finite number
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_wait" must be a finite number
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_ttl" must be a finite number
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_wait" must be between 0 and 1000000000
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_ttl" must be between 0 and 1000000000
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_wait" must be between 0 and 1000000000
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_ttl" must be between 0 and 1000000000
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lifetime" must be greater than or equal to 0
-- types
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_wait" must be of type int|float, string given
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "locking" must be of type bool, int given
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lifetime" must be of type int, float given
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_timeout" must be "warn" or "fail"
ValueError: Ephpm\SessionHandler::__construct(): Argument #2 ($options) option "lock_timeout" must be "warn" or "fail"
-- the limits work
accepted
accepted
accepted
accepted
