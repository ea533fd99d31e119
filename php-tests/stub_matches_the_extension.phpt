--TEST--
stubs/ephpm.stub.php and the loaded extension (php --re ephpm) declare the same classes, methods, functions, parameters, defaults and types
--EXTENSIONS--
ephpm
--FILE--
<?php
// Load the stub under other names beside the real extension, then compare by reflection.
$src = file_get_contents(__DIR__ . '/../stubs/ephpm.stub.php');
$src = str_replace(['namespace Ephpm {', 'function ephpm_'], ['namespace EphpmStub {', 'function ephpmstub_'], $src);
eval('?>' . $src);

function type_of(?ReflectionType $t): ?string { return $t === null ? null : str_replace('EphpmStub\\', 'Ephpm\\', (string)$t); }

/** The extension's type must equal the stub's, except that a union the binding cannot declare shows as mixed, nothing, or one of its members (read(): string for string|false). */
function types_agree(?string $ext, ?string $stub): bool {
    return $ext === $stub || (($ext === null || $ext === 'mixed' || in_array($ext, explode('|', (string) $stub), true)) && $stub !== null && str_contains($stub, '|'));
}

function compare(ReflectionFunctionAbstract $ext, ReflectionFunctionAbstract $stub, string $what, array &$problems): void {
    if (!types_agree(type_of($ext->getReturnType()), type_of($stub->getReturnType()))) {
        $problems[] = "$what: returns " . var_export(type_of($ext->getReturnType()), true) . ', stub says ' . var_export(type_of($stub->getReturnType()), true);
    }
    $ep = $ext->getParameters();
    $sp = $stub->getParameters();
    if (count($ep) !== count($sp)) {
        $problems[] = "$what: " . count($ep) . ' parameters, stub has ' . count($sp);
        return;
    }
    foreach ($ep as $i => $p) {
        $s = $sp[$i];
        $name = "$what \${$s->getName()}";
        if ($p->getName() !== $s->getName()) $problems[] = "$what: parameter $i is \${$p->getName()}, stub says \${$s->getName()}";
        if ($p->isOptional() !== $s->isOptional()) $problems[] = "$name: optional differs";
        if ($p->isPassedByReference() !== $s->isPassedByReference()) $problems[] = "$name: by-reference differs";
        if (!types_agree(type_of($p->getType()), type_of($s->getType()))) $problems[] = "$name: type " . var_export(type_of($p->getType()), true) . ', stub says ' . type_of($s->getType());
        if ($s->isDefaultValueAvailable() && (!$p->isDefaultValueAvailable() || $p->getDefaultValue() != $s->getDefaultValue())) {
            $problems[] = "$name: default differs";
        }
    }
}

$problems = [];
$ext = new ReflectionExtension('ephpm');
$classes = $ext->getClassNames();
$stubClasses = array_values(array_filter(get_declared_classes(), fn($c) => str_starts_with($c, 'EphpmStub\\')));
$map = fn($c) => str_replace('EphpmStub\\', 'Ephpm\\', $c);
sort($classes);
$mapped = array_map($map, $stubClasses);
sort($mapped);
if ($classes !== $mapped) $problems[] = 'classes: extension has ' . implode(', ', $classes) . '; stub has ' . implode(', ', $mapped);
$methods = 0;
foreach ($stubClasses as $sc) {
    $s = new ReflectionClass($sc);
    $e = new ReflectionClass($map($sc));
    if ($e->isFinal() !== $s->isFinal()) $problems[] = "{$e->getName()}: final differs";
    $parent = fn($r) => $r->getParentClass() ? $map($r->getParentClass()->getName()) : null;
    if ($parent($e) !== $parent($s)) $problems[] = "{$e->getName()}: parent differs";
    $own = fn($r) => array_values(array_map(fn($m) => $m->getName(), array_filter($r->getMethods(), fn($m) => $m->getDeclaringClass()->getName() === $r->getName())));
    $em = $own($e); $sm = $own($s);
    sort($em); sort($sm);
    if ($em !== $sm) $problems[] = "{$e->getName()}: methods " . implode(',', $em) . '; stub ' . implode(',', $sm);
    foreach ($sm as $m) {
        if (!$e->hasMethod($m)) continue;
        $methods++;
        compare($e->getMethod($m), $s->getMethod($m), "{$e->getName()}::$m()", $problems);
        if ($e->getMethod($m)->isStatic() !== $s->getMethod($m)->isStatic()) $problems[] = "{$e->getName()}::$m(): static differs";
    }
}
$functions = array_keys($ext->getFunctions());
$stubFunctions = array_values(array_filter(get_defined_functions()['user'], fn($f) => str_starts_with($f, 'ephpmstub_')));
$mappedF = array_map(fn($f) => str_replace('ephpmstub_', 'ephpm_', $f), $stubFunctions);
sort($functions); sort($mappedF);
if ($functions !== $mappedF) $problems[] = 'functions: extension has ' . implode(', ', array_diff($functions, $mappedF)) . ' not in the stub; stub has ' . implode(', ', array_diff($mappedF, $functions)) . ' not in the extension';
foreach ($stubFunctions as $f) {
    $real = str_replace('ephpmstub_', 'ephpm_', $f);
    if (function_exists($real)) compare(new ReflectionFunction($real), new ReflectionFunction($f), "$real()", $problems);
}
echo $problems ? implode("\n", $problems) . "\n" : sprintf("stub and extension agree: %d classes, %d methods, %d functions\n", count($classes), $methods, count($functions));
--EXPECT--
stub and extension agree: 11 classes, 58 methods, 16 functions
