//! A real redis-server for the tests: started in a private directory with a unix socket
//! (mode 0700) and a loopback port, never persisted, stopped by pid. The server a test
//! binary shares (`shared()`) is started from a thread that lives as long as the binary,
//! with PR_SET_PDEATHSIG, so it dies with the tests however they end.
//! `EPHPM_REDIS_SERVER` names another server binary (valkey-server: the systems of
//! php-tests/systems run the generic suites on their Redis and Valkey,
//! php-tests/harness/cargo-redis-suite.sh).
#![allow(dead_code)]

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub struct RedisServer {
    child: Option<Child>,
    pub dir: PathBuf,
    pub socket: PathBuf,
    pub port: u16,
    /// With `start_tls`: the loopback port that speaks TLS, and the CA that signed it.
    pub tls: Option<(u16, PathBuf)>,
}

impl RedisServer {
    /// Starts a server in a fresh directory and waits until it answers.
    pub fn start() -> RedisServer {
        Self::start_with(false)
    }

    /// Also listens with TLS on a second loopback port, with a certificate for 127.0.0.1
    /// signed by a CA made for the test (`openssl`).
    pub fn start_tls() -> RedisServer {
        Self::start_with(true)
    }

    fn start_with(tls: bool) -> RedisServer {
        let dir = std::env::temp_dir().join(format!(
            "ephpm-redis-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).expect("redis test dir");
        let port = free_port();
        let tls = tls.then(|| (free_port(), super::tls::Certs::make(&dir).ca()));
        let mut server = RedisServer {
            child: None,
            socket: dir.join("redis.sock"),
            dir,
            port,
            tls,
        };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let server = std::env::var("EPHPM_REDIS_SERVER").unwrap_or_else(|_| "redis-server".into());
        let mut cmd = Command::new(server);
        cmd.args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .arg("--unixsocket")
            .arg(&self.socket)
            .args([
                "--unixsocketperm",
                "700",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .arg("--dir")
            .arg(&self.dir);
        if let Some((port, _)) = &self.tls {
            cmd.args(["--tls-port", &port.to_string(), "--tls-auth-clients", "no"])
                .arg("--tls-cert-file")
                .arg(self.dir.join("server.crt"))
                .arg("--tls-key-file")
                .arg(self.dir.join("server.key"))
                .arg("--tls-ca-cert-file")
                .arg(self.dir.join("ca.crt"));
        }
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        // SAFETY: prctl(PR_SET_PDEATHSIG) takes plain integers and touches no memory; it
        // is async-signal-safe, as pre_exec requires.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
                Ok(())
            });
        }
        self.child = Some(cmd.spawn().expect("start redis-server (is it installed?)"));
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::os::unix::net::UnixStream::connect(&self.socket).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Kills the server (SIGKILL: as if it crashed).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_file(&self.socket);
    }

    /// Starts it again on the same socket and port.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    pub fn unix_dsn(&self, query: &str) -> String {
        format!("unix://{}{query}", self.socket.display())
    }

    pub fn tcp_dsn(&self, query: &str) -> String {
        format!("redis://127.0.0.1:{}{query}", self.port)
    }

    /// The TLS port's DSN, trusting the test's CA.
    pub fn tls_dsn(&self) -> String {
        let (port, ca) = self.tls.as_ref().expect("started with start_tls");
        format!("rediss://127.0.0.1:{port}?ca={}", ca.display())
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    l.local_addr().expect("local addr").port()
}

/// The server this test binary shares, started once. Tests keep apart by key prefix.
pub fn shared() -> &'static (String, String) {
    static DSNS: OnceLock<(String, String)> = OnceLock::new();
    DSNS.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        // The thread that starts the server never ends, so PR_SET_PDEATHSIG fires only
        // when the whole test binary exits.
        std::thread::spawn(move || {
            let server = RedisServer::start();
            tx.send((server.unix_dsn(""), server.tcp_dsn("")))
                .expect("send dsns");
            loop {
                std::thread::park();
            }
        });
        rx.recv().expect("shared redis-server")
    })
}

/// A server process, killed (SIGKILL, as if it crashed) when dropped.
pub struct Proc(Child);

impl Proc {
    /// Sends `signal` (SIGSTOP, SIGCONT, …) to the process.
    pub fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill(2) takes plain integers and touches no memory of ours; the pid is
        // our own child's, not yet reaped (Drop reaps it).
        let r = unsafe { libc::kill(self.0.id() as libc::pid_t, signal) };
        assert_eq!(r, 0, "kill({}, {signal})", self.0.id());
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn spawn(program: &str, args: &[&str]) -> Proc {
    let mut cmd = Command::new(program);
    cmd.args(args).stdout(Stdio::null()).stderr(Stdio::null());
    // SAFETY: prctl(PR_SET_PDEATHSIG) takes plain integers and touches no memory; it is
    // async-signal-safe, as pre_exec requires.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            Ok(())
        });
    }
    Proc(
        cmd.spawn()
            .unwrap_or_else(|e| panic!("start {program} (is it installed?): {e}")),
    )
}

/// A command to a server of the set, or None while it does not answer.
pub fn ask(port: u16, cmd: &redis::Cmd) -> Option<redis::Value> {
    super::tls::ask_at(None, port, cmd)
}

pub fn info_field(port: u16, section: &str, field: &str) -> Option<String> {
    info_field_at(None, port, section, field)
}

/// `info_field` of a server that speaks TLS when `tls`.
pub fn info_field_at(
    tls: Option<&super::tls::Certs>,
    port: u16,
    section: &str,
    field: &str,
) -> Option<String> {
    let text: String = match super::tls::ask_at(tls, port, redis::cmd("INFO").arg(section))? {
        redis::Value::BulkString(b) => String::from_utf8(b).ok()?,
        redis::Value::VerbatimString { text, .. } => text,
        _ => return None,
    };
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .map(|v| v.trim().to_string())
}

/// Waits (a minute at most: a bound on a hang, not a measurement) until `ready`.
pub fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
