<?php
// The front controller php-fpm runs. APP_ENV comes from the FastCGI parameters.
use EphpmTestApp\Kernel;
use Symfony\Component\HttpFoundation\Request;

require __DIR__ . '/../src/autoload.php';

$kernel = new Kernel($_SERVER['APP_ENV'] ?? 'test', false);
$request = Request::createFromGlobals();
$response = $kernel->handle($request);
$response->send();
$kernel->terminate($request, $response);
