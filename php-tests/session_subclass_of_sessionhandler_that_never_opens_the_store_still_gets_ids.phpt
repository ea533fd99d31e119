--TEST--
session.save_handler=ephpm under a \SessionHandler subclass whose open() never calls parent::open(): session_start(), session_regenerate_id() and session_create_id() get PHP's ids (no crash, no NULL), as with the files handler; a subclass that does open the store gets reserved ids
--EXTENSIONS--
ephpm
session
--INI--
ephpm.store_name=phpt_session_subclass
session.save_handler=ephpm
session.use_cookies=0
session.cache_limiter=
--FILE--
<?php
ob_start(); // no output before the session functions: they refuse after headers
register_shutdown_function(fn () => ob_end_flush());

/** Keeps sessions in an array; inherits create_sid() from \SessionHandler, never opens it. */
class OwnStorage extends SessionHandler
{
    public array $data = [];
    public function open($path, $name): bool { return true; }
    public function close(): bool { return true; }
    public function read($id): string|false { return $this->data[$id] ?? ''; }
    public function write($id, $data): bool { $this->data[$id] = $data; return true; }
    public function destroy($id): bool { unset($this->data[$id]); return true; }
    public function gc($max): int|false { return 0; }
}

$h = new OwnStorage();
session_set_save_handler($h, false);
$valid = fn ($id) => is_string($id) && preg_match('/^[a-zA-Z0-9,-]{32}$/', $id) === 1;

echo "-- session_start() with no id asks the parent for one\n";
var_dump(session_start(), $valid($first = session_id()));
$_SESSION['n'] = 1;

echo "-- session_regenerate_id() and session_create_id() too\n";
var_dump(session_regenerate_id(), $valid($second = session_id()), $second !== $first);
var_dump($valid($third = session_create_id()), $third !== $second);
session_write_close();
var_dump($h->data[$second]);

echo "-- the store was never opened: nothing was reserved in it\n";
$kv = new Ephpm\Kv();
var_dump($kv->has("session:$first"), $kv->has("session:$second"), $kv->has("session:$third"));

echo "-- a subclass that opens the store gets ids reserved in it\n";
class Opens extends SessionHandler {}
session_set_save_handler(new Opens(), false);
session_id('');
var_dump(session_start(), $valid($id = session_id()), $kv->has("session:$id"));
session_destroy();
echo "done\n";
?>
--EXPECT--
-- session_start() with no id asks the parent for one
bool(true)
bool(true)
-- session_regenerate_id() and session_create_id() too
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
string(6) "n|i:1;"
-- the store was never opened: nothing was reserved in it
bool(false)
bool(false)
bool(false)
-- a subclass that opens the store gets ids reserved in it
bool(true)
bool(true)
bool(true)
done
