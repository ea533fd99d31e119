<?php
// The front controller (PHP's built-in web server runs it for every request).
use EphpmProfilerTest\ProfilerKernel;
use Symfony\Component\HttpFoundation\Request;

require __DIR__ . '/autoload.php';

$kernel = new ProfilerKernel('dev', true); // debug, as a developer runs the profiler
$request = Request::createFromGlobals();
$response = $kernel->handle($request);
$response->send();
$kernel->terminate($request, $response);
