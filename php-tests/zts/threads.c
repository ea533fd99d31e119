/*
 * A host that runs several PHP requests at once, each on its own thread of one process:
 * what FrankenPHP and other servers that embed a thread-safe PHP do. It starts the embed
 * SAPI (which loads ephpm from the php.ini that PHPRC names), runs `threads.php work N`
 * on THREADS threads at the same time, then `threads.php report THREADS` on the main
 * thread, whose output is the test's.
 *   threads SCRIPT THREADS      (PHPRC=folder of a php.ini with extension=ephpm.so)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <sapi/embed/php_embed.h>

static const char *script;
static pthread_barrier_t all_started;

/* Runs one PHP snippet as a whole request of the calling thread. */
static void run(const char *mode, long n)
{
    char code[4096];
    snprintf(code, sizeof code, "$argv = ['threads.php', '%s', '%ld']; require '%s';", mode, n, script);
    zend_try {
        zend_eval_string_ex(code, NULL, "threads host", 1);
    } zend_end_try();
}

static void *worker(void *arg)
{
    long n = (long)arg;
    (void)ts_resource(0); /* this thread's PHP globals */
    SG(options) |= SAPI_OPTION_NO_CHDIR;
    if (php_request_startup() == FAILURE) {
        fprintf(stderr, "thread %ld: request startup failed\n", n);
        return NULL;
    }
    pthread_barrier_wait(&all_started); /* every request is open before any works */
    run("work", n);
    php_request_shutdown(NULL);
    ts_free_thread();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 || atol(argv[2]) < 1) {
        fprintf(stderr, "usage: %s SCRIPT THREADS\n", argv[0]);
        return 2;
    }
    script = argv[1];
    long threads = atol(argv[2]);
    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    pthread_barrier_init(&all_started, NULL, (unsigned)threads);

    PHP_EMBED_START_BLOCK(argc, argv)
        for (long i = 0; i < threads; i++) {
            pthread_create(&ids[i], NULL, worker, (void *)i);
        }
        for (long i = 0; i < threads; i++) {
            pthread_join(ids[i], NULL);
        }
        run("report", threads);
    PHP_EMBED_END_BLOCK()

    free(ids);
    return 0;
}
