
# ephpm: cargo builds the crate (one folder up) against the PHP configure found, in a
# target folder of its own here, so that a developer's target/ keeps its own build.
# `make install` only copies: it never runs cargo, which may not be on root's PATH
# (sudo make install, and PIE's elevation).
EPHPM_SOURCES = $(EPHPM_CRATE_DIR)/Cargo.toml $(EPHPM_CRATE_DIR)/Cargo.lock \
	$(shell find $(EPHPM_CRATE_DIR)/src -name '*.rs')

$(phplibdir)/ephpm.la: $(EPHPM_SOURCES)
	PHP="$(PHP_EXECUTABLE)" PHP_CONFIG="$(EPHPM_PHP_CONFIG)" "$(EPHPM_CARGO)" build --release --locked --lib \
		--manifest-path "$(EPHPM_CRATE_DIR)/Cargo.toml" --target-dir "$(builddir)/target"
	$(mkinstalldirs) $(phplibdir)
	cp "$(builddir)/target/release/libephpm.so" $(phplibdir)/ephpm.so
	printf "# Written by ephpm's Makefile.frag: cargo, not libtool, built ephpm.so.\ndlname='ephpm.so'\n" > $@
