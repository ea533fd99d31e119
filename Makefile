# ephpm — two commands on a fresh Debian 12 machine (as root):
#   make demo   installs what is missing, builds the extension, runs examples/demo.php
#   make test   the same, then every test suite, ending with "N passed, N failed, N skipped"

# The extension, copied out of target/release: a build of the engine alone (the tests,
# ephpm-node) writes its own libephpm.so there.
SO       := target/ephpm.so
NODE     := target/release/ephpm-node
PHP      := php -n -d extension=$(CURDIR)/$(SO)
# What the build, the tests and the benchmark need from Debian.
PACKAGES := php8.2-cli php8.2-dev libclang-dev clang php8.2-fpm libfcgi-bin php8.2-apcu openssl \
            php-symfony-cache php-symfony-lock php-illuminate-cache php-illuminate-session \
            php-illuminate-container php-illuminate-config php-laravel-framework redis-server php-redis \
            php-symfony-framework-bundle php-symfony-twig-bundle php-symfony-web-profiler-bundle \
            php-symfony-yaml chromium phpunit php-cache-integration-tests
BENCH_INI := -d extension=apcu -d apc.enable_cli=1 -d apc.shm_size=256M \
             -d ephpm.shm_size=256M -d ephpm.store_name=bench

.PHONY: deps build demo test bench lint install prove-tests-can-fail

deps:
	@missing=""; for p in $(PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@command -v cargo >/dev/null || { echo "cargo is missing: install a Rust toolchain (1.86 or newer)"; exit 1; }

build: deps
	cargo build --release
	install -m 0755 target/release/libephpm.so $(SO)
	cargo build --release --no-default-features --features node --bin ephpm-node

demo: build
	$(PHP) examples/demo.php

test: build
	bash php-tests/harness/test-all.sh $(SO)

bench: build
	php -n $(BENCH_INI) -d extension=$(CURDIR)/$(SO) bench/kv_vs_apcu.php
	$(PHP) bench/stampede.php pool=ephpm
	$(PHP) bench/stampede.php keys=collide modes=nolock,symfony,memolock runs=3
	$(PHP) bench/exclusive.php
	$(PHP) bench/stampede.php modes=expiring,beta,swr
	$(PHP) bench/session.php
	$(PHP) -d extension=igbinary -d extension=redis bench/redis.php
	$(PHP) -d extension=posix bench/stampede.php hosts=4 pool=redis modes=symfony,memolock,memolock-redis
	$(PHP) -d extension=posix bench/stampede.php hosts=3 pool=cluster modes=symfony,memolock,memolock-cluster
	$(PHP) -d extension=posix -d extension=igbinary -d extension=redis bench/cluster.php

lint:
	cargo fmt --check
	cargo clippy --release --all-targets -- -D warnings
	cargo clippy --release --no-default-features --features node --all-targets -- -D warnings

# Installs the built extension into this machine's PHP (CLI and FPM).
install: build
	install -m 0644 $(SO) "$$(php-config --extension-dir)/ephpm.so"
	for sapi in cli fpm; do \
		[ -d /etc/php/8.2/$$sapi/conf.d ] && echo "extension=ephpm.so" > /etc/php/8.2/$$sapi/conf.d/20-ephpm.ini; \
	done; true

# Shows that the concurrency and crash tests can fail: with the guarantees switched off
# (cargo features broken-atomicity, no-repair, no-lock-recovery, and no-owner-routing for
# the cluster)
# they must fail, and this target succeeds only if they do. The cluster's broken build
# goes to target/broken, so that target/release/ephpm-node stays the real one.
prove-tests-can-fail: deps
	! cargo test --release --no-default-features --features broken-atomicity --test shm_concurrency
	! cargo test --release --no-default-features --features broken-atomicity --test locks lock_acquire_race
	! cargo test --release --no-default-features --features broken-atomicity --test memo racing_callers
	! cargo test --release --no-default-features --features broken-atomicity --test stale racing_readers
	! cargo test --release --no-default-features --features broken-atomicity --test session session_lock_release
	! cargo test --release --no-default-features --features no-repair --test shm_crash
	! cargo test --release --target-dir target/broken --no-default-features --features no-lock-recovery --test shm_scribble scribbled_bytes
	! EPHPM_TEST_STORE=redis cargo test --release --no-default-features --features broken-atomicity --test locks lock_acquire_race
	! EPHPM_TEST_STORE=redis cargo test --release --no-default-features --features broken-atomicity --test memo racing_callers
	! EPHPM_TEST_STORE=redis cargo test --release --no-default-features --features broken-atomicity --test stale racing_readers
	! EPHPM_TEST_STORE=redis cargo test --release --no-default-features --features broken-atomicity --test session session_lock_release
	! cargo test --release --target-dir target/broken --no-default-features --features node,no-owner-routing --test cluster one_lock_three_racing_nodes
	! cargo test --release --target-dir target/broken --no-default-features --features node,no-owner-routing --test cluster a_stale_release_after_a_takeover
	! cargo test --release --target-dir target/broken --no-default-features --features node,no-owner-routing --test cluster an_unreachable_owner
	! cargo test --release --target-dir target/broken --no-default-features --features node,no-owner-routing --test cluster thirty_two_processes
	cargo build --release --features broken-atomicity --target-dir target/broken
	bash php-tests/harness/fpm-suite.sh target/broken/release/libephpm.so | tee /dev/stderr | grep -q ' [1-9][0-9]* failed'
	bash php-tests/harness/fpm-suite.sh target/broken/release/libephpm.so redis | tee /dev/stderr | grep -q ' [1-9][0-9]* failed'
	bash php-tests/harness/run-phpt.sh target/broken/release/libephpm.so \
		php-tests/memolock_exclusively_never_runs_two_sections_at_once.phpt \
		php-tests/memolock_symfony_cold_key_is_computed_once_by_12_processes.phpt \
		php-tests/memolock_once_makes_the_thing_once_for_4_processes.phpt \
		php-tests/stale_cache_12_processes_on_a_stale_key_are_served_at_once_and_one_refreshes.phpt \
		php-tests/session_lock_release_cannot_delete_a_lock_it_no_longer_holds.phpt \
		php-tests/laravel_cache_store_lock_and_session_driver.phpt | tee /dev/stderr | grep -q ' [1-9][0-9]* failed'
	bash php-tests/harness/run-phpt.sh target/broken/release/libephpm.so \
		php-tests/redis_fleet_of_4_hosts_computes_a_cold_key_once.phpt | tee /dev/stderr | grep -q ' [1-9][0-9]* failed'
	cargo build --release --features no-lock-recovery --target-dir target/broken
	bash php-tests/harness/run-phpt.sh target/broken/release/libephpm.so \
		php-tests/kv_scribbled_segment_never_hangs_or_crashes_php.phpt | tee /dev/stderr | grep -q ' [1-9][0-9]* failed'
