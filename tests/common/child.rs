//! Child processes for cross-process tests: the test binary re-runs itself with one test
//! selected and an environment variable naming the job, so children are real processes
//! that map the store themselves (no fork of a multi-threaded test harness).
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// The env var a child test reads its job from.
pub const JOB: &str = "EPHPM_TEST_CHILD_JOB";

/// Starts `test_name` of this test binary as a child with `job` in its environment, and
/// waits until it prints "ready".
pub fn spawn(test_name: &str, job: &str) -> Child {
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", test_name, "--nocapture", "--test-threads=1"])
        .env(JOB, job)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn child");
    let out = child.stdout.take().expect("child stdout");
    let mut lines = BufReader::new(out).lines();
    loop {
        match lines.next() {
            Some(Ok(l)) if l.trim_end().ends_with("ready") => break,
            Some(Ok(_)) => continue,
            _ => panic!("child {test_name} exited before it was ready"),
        }
    }
    // Keep draining its output so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    child
}

/// The job, when this process is a child started by `spawn`.
pub fn job() -> Option<String> {
    std::env::var(JOB).ok()
}

/// Tells the parent the child is ready. The child also asks the kernel to kill it when
/// the parent's test thread ends, so a failing test never leaves children running.
pub fn ready() {
    use std::io::Write;
    // SAFETY: prctl(PR_SET_PDEATHSIG) takes plain integers and touches no memory.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) };
    println!("ready");
    let _ = std::io::stdout().flush();
}

/// A small xorshift generator: tests need varied, not secure, numbers.
pub struct Rng(pub u64);

impl Rng {
    pub fn seeded() -> Self {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Rng(t.as_nanos() as u64 ^ ((std::process::id() as u64) << 32) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
