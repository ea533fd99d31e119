--TEST--
Ephpm\Kv: every PHP type round-trips with its type (string, int, float, bool, null, array, object)
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_types
ephpm.shm_size=4M
--FILE--
<?php
class Point { public function __construct(public int $x = 0, public int $y = 0) {} }
$kv = new Ephpm\Kv();
$kv->clear();
$values = [
    'string' => "bytes\0with nul",
    'empty' => '',
    'int' => PHP_INT_MAX,
    'negative' => -7,
    'float' => 3.25,
    'true' => true,
    'false' => false,
    'null' => null,
    'array' => ['a' => [1, 2.5, 'x'], 3 => null],
    'object' => new Point(3, 4),
    'big' => str_repeat('0123456789', 5000),
];
foreach ($values as $k => $v) {
    $kv->set($k, $v);
}
foreach ($values as $k => $v) {
    $got = $kv->get($k, 'DEFAULT');
    $same = is_object($v) ? $got == $v && get_class($got) === get_class($v) : $got === $v;
    echo $k, ': ', get_debug_type($got), ' ', $same ? 'same' : 'DIFFERENT', "\n";
}
var_dump($kv->get('missing'), $kv->get('missing', 42));
--EXPECT--
string: string same
empty: string same
int: int same
negative: int same
float: float same
true: bool same
false: bool same
null: null same
array: array same
object: Point same
big: string same
NULL
int(42)
