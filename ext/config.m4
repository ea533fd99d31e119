dnl phpize's way in (and PIE's, whose composer.json points its build-path here):
dnl   phpize && ./configure && make && make install
dnl ephpm is a Rust crate, so there is no C to compile: configure checks the Rust toolchain
dnl and libclang, and Makefile.frag has cargo build the crate one folder up against the
dnl PHP that phpize and --with-php-config name. The build lives in this folder (ext/), not
dnl in the repository's root, because phpize, configure and `make clean` write and delete
dnl Makefile, build/ and every *.so under the folder they run in.

PHP_ARG_ENABLE([ephpm],
  [whether to build ephpm],
  [AS_HELP_STRING([--enable-ephpm], [Build ephpm (always, when built with phpize)])],
  [yes])

PHP_ARG_WITH([cargo],,
  [AS_HELP_STRING([--with-cargo=PATH],
    [cargo to build ephpm with (default: cargo on the PATH, then ~/.cargo/bin/cargo)])],
  [no],
  [no])

if test "$PHP_EPHPM" != "no"; then
  EPHPM_CRATE_DIR=`cd "$abs_srcdir/.." && pwd`
  if test ! -f "$EPHPM_CRATE_DIR/Cargo.toml"; then
    AC_MSG_ERROR([ephpm's Cargo.toml is not in $EPHPM_CRATE_DIR: run phpize in the ext folder of an ephpm source tree])
  fi

  dnl The oldest Rust the crate builds with, from Cargo.toml: the one place it is written.
  ephpm_rust_min=`$SED -n 's/^rust-version *= *"\(.*\)"/\1/p' "$EPHPM_CRATE_DIR/Cargo.toml"`
  ephpm_install_rust="install Rust $ephpm_rust_min or newer with rustup (https://rustup.rs: curl https://sh.rustup.rs -sSf | sh, then open a new shell), or pass --with-cargo=PATH"

  AC_MSG_CHECKING([for cargo])
  if test "$PHP_CARGO" != "no" && test "$PHP_CARGO" != "yes"; then
    EPHPM_CARGO=$PHP_CARGO
  else
    EPHPM_CARGO=`command -v cargo 2>/dev/null`
    if test -z "$EPHPM_CARGO" && test -x "$HOME/.cargo/bin/cargo"; then
      EPHPM_CARGO=$HOME/.cargo/bin/cargo
    fi
  fi
  if test -z "$EPHPM_CARGO" || test ! -x "$EPHPM_CARGO"; then
    AC_MSG_RESULT([not found])
    AC_MSG_ERROR([ephpm is written in Rust and builds with cargo, which was not found: $ephpm_install_rust])
  fi
  AC_MSG_RESULT([$EPHPM_CARGO])

  AC_MSG_CHECKING([whether cargo is Rust $ephpm_rust_min or newer])
  ephpm_cargo_version=`"$EPHPM_CARGO" --version 2>/dev/null | $SED -n 's/^cargo \([[0-9]][[0-9]]*\.[[0-9]][[0-9]]*\.[[0-9]][[0-9]]*\).*/\1/p'`
  ephpm_version_ok=`echo "$ephpm_cargo_version $ephpm_rust_min" | $AWK '{
    split($1, have, "."); split($2, need, ".");
    for (i = 1; i <= 3; i++) { if (have[[i]] + 0 > need[[i]] + 0) { print "yes"; exit } if (have[[i]] + 0 < need[[i]] + 0) { print "no"; exit } }
    print "yes" }'`
  if test -z "$ephpm_cargo_version" || test "$ephpm_version_ok" != "yes"; then
    AC_MSG_RESULT([no, ${ephpm_cargo_version:-an unknown version}])
    AC_MSG_ERROR([$EPHPM_CARGO is cargo ${ephpm_cargo_version:-of an unknown version}, too old for ephpm: $ephpm_install_rust (rustup update, if it came from rustup)])
  fi
  AC_MSG_RESULT([yes, $ephpm_cargo_version])

  dnl ext-php-rs reads PHP's headers with bindgen, which loads libclang at build time.
  AC_MSG_CHECKING([for libclang])
  ephpm_libclang=
  for ephpm_dir in "$LIBCLANG_PATH" `llvm-config --libdir 2>/dev/null` /usr/lib/llvm-*/lib /usr/lib/*-linux-gnu /usr/lib64 /usr/lib /usr/local/lib; do
    for ephpm_lib in "$ephpm_dir"/libclang.so* "$ephpm_dir"/libclang-[[0-9]]*.so*; do
      if test -f "$ephpm_lib"; then ephpm_libclang=$ephpm_lib; break 2; fi
    done
  done
  if test -z "$ephpm_libclang"; then
    AC_MSG_RESULT([not found])
    AC_MSG_ERROR([ephpm's build reads PHP's headers with libclang, which was not found: install libclang-dev (Debian, Ubuntu), clang-devel (Fedora) or clang-dev (Alpine), or set LIBCLANG_PATH to the folder that holds libclang.so])
  fi
  AC_MSG_RESULT([$ephpm_libclang])

  dnl ext-php-rs takes the PHP to build against from PHP (the binary: version, ZTS, debug)
  dnl and PHP_CONFIG (the headers), both as paths that must exist.
  EPHPM_PHP_CONFIG=`command -v "$PHP_CONFIG" 2>/dev/null`
  if test -z "$EPHPM_PHP_CONFIG" || test ! -x "$PHP_EXECUTABLE"; then
    AC_MSG_ERROR([php-config ($PHP_CONFIG) or the PHP it names ($PHP_EXECUTABLE) was not found: pass --with-php-config=PATH])
  fi

  dnl No C sources: the module is whatever cargo builds, made a libtool-style .la so that
  dnl install-modules and `make test` treat it like any other module.
  PHP_MODULES='$(phplibdir)/ephpm.la'
  PHP_ADD_BUILD_DIR([modules])
  PHP_SUBST(EPHPM_CARGO)
  PHP_SUBST(EPHPM_CRATE_DIR)
  PHP_SUBST(EPHPM_PHP_CONFIG)
  PHP_ADD_MAKEFILE_FRAGMENT([$abs_srcdir/Makefile.frag], [$abs_srcdir], [$abs_builddir])
fi
