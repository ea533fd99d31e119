//! Real cluster nodes for the tests: `ephpm-node` processes on 127.0.0.N, each with its
//! own host store in the test's directory and its own process group, stopped by pid.
//! They die with the test thread (PR_SET_PDEATHSIG) however it ends. Each node's
//! stderr goes to `node-N.log` in the directory; `dump_logs` prints them.
#![allow(dead_code)]

use std::io::Write;
use std::net::{SocketAddr, UdpSocket};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ephpm::ground::dsn::Copies;
use ephpm::store::Store;
use ephpm::store::cluster::ClusterStore;
use ephpm::store::shm::{ShmOptions, ShmStore};

use super::TestDir;

pub const SECRET: &str = "dGVzdC1jbHVzdGVyLXNlY3JldC0xMjgtYml0cw";

/// Writes a secret file as an operator must: mode 0600, or the node refuses it (a
/// rewrite keeps the mode, as `echo NEW > file` does).
/// The secret file's contents through a rotation from `a` to `b`: both with `a` signing,
/// both with `b` signing, `b` alone.
pub fn rotation_steps(a: &str, b: &str) -> [String; 3] {
    [
        format!("{a}\n{b}\n"),
        format!("{b}\n{a}\n"),
        format!("{b}\n"),
    ]
}

pub fn write_secret(path: &Path, text: &str) {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .expect("open the secret file");
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .expect("chmod 600");
    file.write_all(text.as_bytes()).expect("write the secret");
}

pub struct TestNode {
    pub index: u8,
    pub gossip: SocketAddr,
    pub dir: PathBuf,
    args: Vec<String>,
    /// The cluster segment's size (`--shm-size`): the test's stores open it with this
    /// size, since a store that opens it before the node does makes it.
    shm_bytes: u64,
    child: Option<Child>,
    /// RLIMIT_NOFILE for the process (`start_limited`).
    nofile: Option<u64>,
    /// Environment variables for the process (`set_env`).
    env: Vec<(String, String)>,
}

/// The bytes of a size the tests write as `"512M"`.
fn megabytes(size: &str) -> u64 {
    let n: u64 = size
        .strip_suffix('M')
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("--shm-size {size}: the tests give sizes in M"));
    n << 20
}

/// A free UDP port on 127.0.0.N, for a node's gossip.
fn free_gossip_addr(index: u8) -> SocketAddr {
    let s = UdpSocket::bind(("127.0.0.".to_string() + &index.to_string(), 0)).expect("bind udp");
    s.local_addr().expect("udp addr")
}

impl TestNode {
    /// Starts node `index` (1…254) on 127.0.0.`index`, joining through `seeds`, with the
    /// test secret, a 100 ms gossip interval and a 16M segment unless `extra` says
    /// otherwise (`shm_size`).
    pub fn start(dir: &TestDir, index: u8, seeds: &[SocketAddr], extra: &[&str]) -> TestNode {
        Self::start_limited(dir, index, seeds, extra, None)
    }

    /// `start`, with the process's open files limited to `nofile` (`ulimit -n`).
    pub fn start_limited(
        dir: &TestDir,
        index: u8,
        seeds: &[SocketAddr],
        extra: &[&str],
        nofile: Option<u64>,
    ) -> TestNode {
        Self::start_full(dir, index, seeds, extra, nofile, &[])
    }

    fn start_full(
        dir: &TestDir,
        index: u8,
        seeds: &[SocketAddr],
        extra: &[&str],
        nofile: Option<u64>,
        env: &[(&str, &str)],
    ) -> TestNode {
        let gossip = free_gossip_addr(index);
        let mut args: Vec<String> = vec![
            "--store".into(),
            format!("n{index}"),
            "--node-id".into(),
            format!("node-{index}"),
            "--gossip".into(),
            gossip.to_string(),
            "--shm-dir".into(),
            dir.0.display().to_string(),
        ];
        let shm_bytes = match extra.iter().position(|a| *a == "--shm-size") {
            Some(i) => megabytes(extra[i + 1]),
            None => {
                args.extend(["--shm-size".into(), "16M".into()]);
                16 << 20
            }
        };
        if !extra.contains(&"--gossip-interval-ms") {
            args.extend(["--gossip-interval-ms".into(), "100".into()]);
        }
        for s in seeds {
            args.extend(["--seed".into(), s.to_string()]);
        }
        args.extend(extra.iter().map(|s| s.to_string()));
        let mut node = TestNode {
            index,
            gossip,
            dir: dir.0.clone(),
            args,
            shm_bytes,
            child: None,
            nofile,
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        node.spawn(!extra.contains(&"--no-secret"));
        node
    }

    /// `start`, with `env` set for the process (and kept for its restarts).
    pub fn start_env(
        dir: &TestDir,
        index: u8,
        seeds: &[SocketAddr],
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> TestNode {
        Self::start_full(dir, index, seeds, extra, None, env)
    }

    /// Sets an environment variable for the node's next start (`restart`).
    pub fn set_env(&mut self, key: &str, value: &str) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.into(), value.into()));
    }

    fn spawn(&mut self, with_secret: bool) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(format!("node-{}.log", self.index)))
            .expect("node log");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ephpm-node"));
        let args: Vec<&String> = self.args.iter().filter(|a| *a != "--no-secret").collect();
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        if with_secret {
            cmd.env("EPHPM_CLUSTER_SECRET", SECRET);
        } else {
            cmd.env_remove("EPHPM_CLUSTER_SECRET");
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd.process_group(0);
        let nofile = self.nofile;
        // SAFETY: prctl and setrlimit with plain integers and a stack struct,
        // async-signal-safe between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
                if let Some(n) = nofile {
                    let lim = libc::rlimit {
                        rlim_cur: n,
                        rlim_max: n,
                    };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        self.child = Some(cmd.spawn().expect("spawn ephpm-node"));
    }

    pub fn options(&self) -> ShmOptions {
        ShmOptions {
            dir: self.dir.clone(),
            ..ShmOptions::new(&format!("n{}", self.index), self.shm_bytes)
        }
    }

    /// The host's cluster segment, as the node keeps it.
    pub fn segment(&self) -> ShmStore {
        ShmStore::open(&ephpm::wire::segment_options(&self.options()))
            .expect("open the cluster segment")
            .0
    }

    /// What the host's segment says about `key`: a value, a delete, a marker of a value
    /// held elsewhere, or nothing.
    pub fn segment_state(&self, key: &[u8]) -> Option<&'static str> {
        use ephpm::wire::entry::{State, parse};
        let mut state = None;
        self.segment()
            .read(key, &mut |v| {
                if let ephpm::store::Value::Str(e) = v {
                    state = parse(e).map(|(_, s)| match s {
                        State::Value(_) => "value",
                        State::Deleted => "deleted",
                        State::Elsewhere => "elsewhere",
                    });
                }
            })
            .expect("read the cluster segment");
        state
    }

    /// A PHP process's view of the cluster through this node.
    pub fn store(&self) -> ClusterStore {
        self.store_with(Copies::Sync)
    }

    /// `store`, whose lock operations ask for `copies` (`cluster://?copies=`).
    pub fn store_with(&self, copies: Copies) -> ClusterStore {
        ClusterStore::open(&self.options(), Duration::from_secs(3), b"", copies)
            .expect("open cluster store")
            .0
    }

    pub fn id(&self) -> String {
        format!("node-{}", self.index)
    }

    pub fn pid(&self) -> i32 {
        self.child.as_ref().map_or(0, |c| c.id() as i32)
    }

    pub fn signal(&self, sig: libc::c_int) {
        // SAFETY: kill with a pid this test started and a signal number.
        unsafe { libc::kill(self.pid(), sig) };
    }

    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Kills and starts the node again: a new generation of the same node id, on the
    /// same addresses, with the host store it had.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn(true);
    }

    /// What the node wrote to its log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join(format!("node-{}.log", self.index)))
            .unwrap_or_default()
    }

    /// The node's resident memory (VmRSS), in KiB.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("the node's /proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS")
    }

    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }
}

impl Drop for TestNode {
    fn drop(&mut self) {
        self.signal(libc::SIGCONT);
        self.kill();
    }
}

/// A free TCP address on 127.0.0.N, for a node's data plane (`--data`), so a test
/// knows where it listens.
pub fn free_data_addr(index: u8) -> SocketAddr {
    let l = std::net::TcpListener::bind(("127.0.0.".to_string() + &index.to_string(), 0))
        .expect("bind tcp");
    l.local_addr().expect("tcp addr")
}

/// Starts `n` nodes, the first the others' seed, and waits until every one sees all.
pub fn start_cluster(dir: &TestDir, n: u8, extra: &[&str]) -> Vec<TestNode> {
    let first = TestNode::start(dir, 1, &[], extra);
    let seed = first.gossip;
    let mut nodes = vec![first];
    for i in 2..=n {
        nodes.push(TestNode::start(dir, i, &[seed], extra));
    }
    let all: Vec<String> = nodes.iter().map(TestNode::id).collect();
    for node in &nodes {
        wait_for_members(node, &all);
    }
    nodes
}

/// Waits (at most 30 s) until `node` sees exactly `ids` as members.
pub fn wait_for_members(node: &TestNode, ids: &[String]) {
    let mut want = ids.to_vec();
    want.sort();
    let deadline = Instant::now() + Duration::from_secs(30);
    let store = node.store();
    loop {
        let seen = store.members().ok();
        if seen.as_deref() == Some(&want[..]) {
            // The view settles (`Node::settled`) after two quiet gossip intervals.
            std::thread::sleep(Duration::from_millis(300));
            return;
        }
        if Instant::now() > deadline {
            dump_logs(&node.dir);
            panic!("node-{} sees {seen:?}, not {want:?}", node.index);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn dump_logs(dir: &std::path::Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "log") {
                eprintln!(
                    "==== {}\n{}",
                    p.display(),
                    std::fs::read_to_string(&p).unwrap_or_default()
                );
            }
        }
    }
}

/// Retries `f` for up to 20 s until it returns `Some`.
pub fn eventually<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The 3-node cluster a test binary shares (`EPHPM_TEST_STORE=cluster`), started once
/// from a thread that never ends (so PR_SET_PDEATHSIG fires only when the binary exits);
/// its directory is removed at exit. Tests keep apart by key prefix.
pub fn shared() -> &'static [ShmOptions] {
    static NODES: std::sync::OnceLock<Vec<ShmOptions>> = std::sync::OnceLock::new();
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    extern "C" fn remove_dir() {
        match (DIR.get(), std::env::var_os("EPHPM_TEST_KEEP_LOGS")) {
            (Some(d), None) => {
                let _ = std::fs::remove_dir_all(d);
            }
            (Some(d), Some(_)) => eprintln!("the shared cluster's logs are in {}", d.display()),
            _ => {}
        }
    }
    NODES.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let dir = TestDir::new("shared-cluster");
            let nodes = start_cluster(&dir, 3, &[]);
            let _ = DIR.set(dir.0.clone());
            // SAFETY: registers a function without arguments that only removes files.
            unsafe { libc::atexit(remove_dir) };
            tx.send(nodes.iter().map(TestNode::options).collect::<Vec<_>>())
                .expect("send the shared cluster");
            let _keep = (dir, nodes);
            loop {
                std::thread::park();
            }
        });
        rx.recv().expect("the shared cluster")
    })
}

/// How many times `node` has taken a new secret file (its log says so each time).
pub fn reloads(node: &TestNode) -> usize {
    node.log().matches("secret(s) from").count()
}

/// `ephpm cluster --json` on `node`'s host store, parsed; `Err` with its stderr when the
/// command failed.
pub fn cluster_json(node: &TestNode) -> Result<serde_json::Value, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_ephpm"))
        .arg("--shm-dir")
        .arg(&node.dir)
        .args(["--store", &format!("n{}", node.index), "cluster", "--json"])
        .output()
        .expect("run ephpm");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
}
