<?php

namespace EphpmTestApp;

use Ephpm\Kv;
use Symfony\Component\Cache\Adapter\AbstractAdapter;
use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\HttpFoundation\Response;
use Symfony\Component\Lock\LockFactory;
use Symfony\Contracts\Cache\CacheInterface;
use Symfony\Contracts\Cache\ItemInterface;

/**
 * What the suite asks the application. Counters and markers live in the default store
 * (shm://) under "test:", where the suite's CLI probes read and write them; the pools,
 * the locks and the sessions live in the store "host" (shm://, or a redis-server).
 */
final class Controller
{
    private Kv $marks;

    public function __construct(private CacheInterface $poolA, private CacheInterface $poolB, private LockFactory $lockFactory, private Kv $host)
    {
        $this->marks = new Kv(null, 'test:');
    }

    /** /cold?pool=a|b&key=K&ms=N: the item; each computation counts in test:origin:<pool>:<key> and lasts N ms. */
    public function cold(Request $request): Response
    {
        [$name, $key] = [$request->query->get('pool', 'a'), $request->query->get('key', 'cold')];
        $ms = $request->query->getInt('ms');

        return new Response($this->pool($name)->get($key, function (ItemInterface $item) use ($name, $key, $ms) {
            $this->marks->increment("origin:$name:$key");
            usleep($ms * 1000);

            return "computed by pool $name";
        }));
    }

    /**
     * /hold?pool=a&key=K: computes the item K and holds the computation (and its lock)
     * until the suite sets test:release:<pool>:<key> (8 s at most); marks test:holding:…
     * when it starts and test:done:… when it ends.
     */
    public function hold(Request $request): Response
    {
        [$name, $key] = [$request->query->get('pool', 'a'), $request->query->get('key', 'same')];

        return new Response($this->pool($name)->get($key, function (ItemInterface $item) use ($name, $key) {
            $this->marks->set("holding:$name:$key", 1);
            $this->marks->wait("release:$name:$key", 0, 8);
            $this->marks->set("done:$name:$key", 1);

            return "held by pool $name";
        }));
    }

    /**
     * /lockname?pool=a&key=K: the name of the lock the pool's MemoLock takes to compute K,
     * as the bundle promises it: `memo:` and the pool's namespace (the prefix of the
     * MemoLock's Kv), then MemoLock's own `memo:<key>`.
     */
    public function lockName(Request $request): Response
    {
        $pool = $this->pool($request->query->get('pool', 'a'));
        $namespace = (new \ReflectionProperty(AbstractAdapter::class, 'namespace'))->getValue($pool); // "<namespace>:"

        return new Response('memo:' . $namespace . 'memo:' . $request->query->get('key'));
    }

    /** /lock: which store lock.factory (autowired LockFactory) locks on, and whether its lock shows in the store "host". */
    public function lock(): Response
    {
        $lock = $this->lockFactory->createLock('probe-lock', 30);
        $lock->acquire(true);
        $store = (new \ReflectionProperty(LockFactory::class, 'store'))->getValue($this->lockFactory);
        $seen = null !== $this->host->ttl('probe-lock');
        $lock->release();

        return new Response(sprintf('%s, held lock in the store "host": %s', \get_class($store), $seen ? 'yes' : 'no'));
    }

    /** /session/start: a new session (its counter at 0); answers its id. */
    public function sessionStart(Request $request): Response
    {
        $session = $request->getSession();
        $session->set('n', 0);

        return new Response($session->getId());
    }

    /** /session/incr: reads the session's counter, waits 10 ms, writes it plus one. */
    public function sessionIncr(Request $request): Response
    {
        $session = $request->getSession();
        $n = $session->get('n', 0) + 1;
        usleep(10000);
        $session->set('n', $n);

        return new Response((string) $n);
    }

    private function pool(string $name): CacheInterface
    {
        return 'b' === $name ? $this->poolB : $this->poolA;
    }
}
