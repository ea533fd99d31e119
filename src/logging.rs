//! Where the long-running parts say what happens: the cluster node (in ephpm-node, or
//! in the PHP process that holds the host's lease), ephpm-resp. They log with
//! `tracing`'s levels; `init` sends the events to stderr, one line each, as
//! `PROGRAM: LEVEL message` — php-fpm's error log and a terminal read it as it is, and
//! under systemd (`JOURNAL_STREAM` set) each line starts with the `<N>` priority that
//! journald reads from a service's stderr (sd-daemon(3)), so `journalctl -p warning`
//! shows the warnings. No timestamp: php-fpm and journald add their own.
//!
//! Which levels: `RUST_LOG` (tracing's filter syntax: `warn`, `ephpm=debug`, …) when
//! the caller gives none, else `info`.

use std::fmt;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// Installs the process's logger, once (a later call, or one after another logger was
/// installed, changes nothing). `level` (a filter such as "warn") wins over `RUST_LOG`.
pub fn init(program: &'static str, level: Option<&str>) {
    let filter = match level {
        Some(l) => EnvFilter::new(l),
        None => EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .event_format(Line {
            program,
            journald: std::env::var_os("JOURNAL_STREAM").is_some(),
        })
        .try_init();
}

/// Whether `level` is a filter `init` takes (for a command line's `--log-level`).
pub fn valid_filter(level: &str) -> Result<(), String> {
    EnvFilter::try_new(level)
        .map(drop)
        .map_err(|e| format!("not a log filter ({e}): error, warn, info, debug, trace"))
}

/// One event as one line.
struct Line {
    program: &'static str,
    journald: bool,
}

impl<S, N> FormatEvent<S, N> for Line
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut w: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let level = *event.metadata().level();
        if self.journald {
            // syslog's priorities: err 3, warning 4, info 6, debug 7.
            let priority = match level {
                Level::ERROR => 3,
                Level::WARN => 4,
                Level::INFO => 6,
                Level::DEBUG | Level::TRACE => 7,
            };
            write!(w, "<{priority}>")?;
        }
        write!(w, "{}: ", self.program)?;
        if level != Level::INFO {
            write!(w, "{level}: ")?;
        }
        ctx.field_format().format_fields(w.by_ref(), event)?;
        writeln!(w)
    }
}
