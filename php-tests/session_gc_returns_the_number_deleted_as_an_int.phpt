--TEST--
gc returns the number of sessions it deleted, an int (0: the store expires sessions itself), as PHP 8's SessionHandlerInterface::gc(): int|false says: session_gc() with the native handler, through \SessionHandler, and Ephpm\SessionHandler::gc(), also when session.gc_probability runs it at session_start()
--EXTENSIONS--
ephpm
session
--INI--
ephpm.store_name=phpt_session_gc
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
session.gc_probability=1
session.gc_divisor=1
--FILE--
<?php
ob_start(); // no output before the session functions: they refuse after headers
register_shutdown_function(fn () => ob_end_flush());

echo "-- native\n";
session_start();
var_dump(session_gc());
session_write_close();

echo "-- through \\SessionHandler\n";
class Wrapped extends SessionHandler {}
$wrapped = new Wrapped();
session_set_save_handler($wrapped, true);
session_start();
var_dump(session_gc(), $wrapped->gc(1));
session_write_close();

echo "-- Ephpm\\SessionHandler\n";
$h = new Ephpm\SessionHandler();
var_dump($h->gc(1440), $h->gc(0), $h->gc(PHP_INT_MAX));
session_set_save_handler($h, true);
session_start();
var_dump(session_gc());
session_write_close();
echo (new ReflectionMethod($h, 'gc'))->getReturnType(), "\n";
?>
--EXPECT--
-- native
int(0)
-- through \SessionHandler
int(0)
int(0)
-- Ephpm\SessionHandler
int(0)
int(0)
int(0)
int(0)
int
