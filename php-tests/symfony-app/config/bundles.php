<?php

return [
    Symfony\Bundle\FrameworkBundle\FrameworkBundle::class => ['all' => true],
    Ephpm\Symfony\EphpmBundle::class => ['all' => true],
];
