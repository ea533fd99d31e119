--TEST--
Ephpm\MemoLock on a store that cannot be reached keeps one rule: what asked for exclusion (acquire(), exclusively(), once()) throws LockUnavailable, never StoreUnavailable or a null that would read as "busy"; the cache wrapper computes without protection and logs a warning; bad arguments are still ValueErrors
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_memolock_unreachable
--FILE--
<?php
final class Logger { public function warning(string $m, array $c = []): void { echo 'logged: ', preg_replace('/\(os error \d+\)/', '', $m), "\n"; } }
final class Item {
    public mixed $value = null;
    public function getKey(): string { return 'report'; }
    public function isHit(): bool { return false; }
    public function get(): mixed { return $this->value; }
    public function set(mixed $v): static { $this->value = $v; return $this; }
}
final class Pool {
    public function getItem(string $key): Item { return new Item(); }
    public function save(Item $item): bool { return true; }
}
$memo = Ephpm\MemoLock::fromDsn('redis://127.0.0.1:1?timeout=0.2', 1000, 50, new Logger());
$show = function (string $what, Closure $f) {
    try {
        $r = var_export($f(), true);
    } catch (Throwable $e) {
        $r = get_class($e) . ' (' . ($e instanceof Ephpm\StoreException ? 'a StoreException' : 'not a StoreException') . '): '
            . preg_replace('/\(os error \d+\)/', '', $e->getMessage());
    }
    echo "$what: $r\n";
};
$show('acquire', fn () => $memo->acquire('report'));
$show('acquire with a wait', fn () => $memo->acquire('report', 1000, 100));
$show('exclusively', fn () => $memo->exclusively('report', fn () => 'ran'));
$show('once', fn () => $memo->once('report', fn () => null, fn () => 'made'));
$save = true;
$show('__invoke', fn () => $memo(fn () => 'computed', new Item(), $save, new Pool()));
$show('acquire, bad ttl', fn () => $memo->acquire('report', 0));
$show('acquire, empty name', fn () => $memo->acquire(''));
--EXPECT--
acquire: Ephpm\LockUnavailable (not a StoreException): Ephpm\MemoLock::acquire(): the lock store cannot be used: the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
acquire with a wait: Ephpm\LockUnavailable (not a StoreException): Ephpm\MemoLock::acquire(): the lock store cannot be used: the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
exclusively: Ephpm\LockUnavailable (not a StoreException): Ephpm\MemoLock::exclusively(): the lock store cannot be used: the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
once: Ephpm\LockUnavailable (not a StoreException): Ephpm\MemoLock::once(): the lock store cannot be used: the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
logged: ephpm: computing "memo:report" without stampede protection: the store at redis://127.0.0.1:1 cannot be reached: Connection refused 
__invoke: 'computed'
acquire, bad ttl: ValueError (not a StoreException): Ephpm\MemoLock::acquire(): Argument #2 ($ttlMs) must be between 1 and 1000000000000
acquire, empty name: ValueError (not a StoreException): Ephpm\MemoLock::acquire(): Argument #1 ($name) cannot be empty
