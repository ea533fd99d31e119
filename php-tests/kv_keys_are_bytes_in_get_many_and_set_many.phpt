--TEST--
Ephpm\Kv: keys are bytes everywhere: getMany() gives a binary, non-UTF-8 or NUL-holding key back as the same PHP string (a canonical decimal becomes an int key, as PHP stores it), setMany() takes such keys without a panic, and a list's own keys may be anything
--EXTENSIONS--
ephpm
--INI--
ephpm.store_name=phpt_binary_keys
ephpm.shm_size=4M
--FILE--
<?php
$kv = new Ephpm\Kv(null, "pre\xff\0:");
$kv->clear();
$keys = ["caf\xe9", "\0", "a\0b", "\xff\xfe", '123', '-0', '0123', '9223372036854775808', '-5'];
$values = [];
foreach ($keys as $i => $k) {
    $values[$k] = "v\xe9\0$i";
}
var_dump($kv->setMany($values));
$got = $kv->getMany(array_keys($values));
var_dump($got === $values);
foreach ($got as $k => $v) {
    echo gettype($k), ' ', bin2hex((string) $k), ' => ', bin2hex($v), "\n";
}
// The list's own keys are not keys of the store; its elements are.
var_dump($kv->getMany(["\xe9" => "caf\xe9", "\0" => 123]) === ["caf\xe9" => "v\xe9\x000", 123 => "v\xe9\x004"]);
var_dump(bin2hex($kv->get("caf\xe9")), $kv->has("a\0b"), $kv->get("a"));
// Without the prefix, nothing is there: the NUL in the prefix is part of it.
var_dump((new Ephpm\Kv())->getMany(["caf\xe9", "pre\xff"]));
--EXPECT--
bool(true)
bool(true)
string 636166e9 => 76e90030
string 00 => 76e90031
string 610062 => 76e90032
string fffe => 76e90033
integer 313233 => 76e90034
string 2d30 => 76e90035
string 30313233 => 76e90036
string 39323233333732303336383534373735383038 => 76e90037
integer 2d35 => 76e90038
bool(true)
string(8) "76e90030"
bool(true)
NULL
array(0) {
}
