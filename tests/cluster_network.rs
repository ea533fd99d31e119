//! The gossip cluster against the network and the host (issue 14), with real
//! `ephpm-node` processes on 127.0.0.N (`common::cluster`):
//!
//! - data-plane frames recorded by a proxy and replayed, on new connections and on the
//!   same one, execute nothing twice and are counted;
//! - gossip datagrams recorded by a UDP relay and played again change nothing and are
//!   counted;
//! - a connection flood under `ulimit -n 128` ends and the node serves again; length
//!   prefixes of 48 MiB from peers that never authenticated allocate nothing;
//! - a client of another user is refused by the node's unix socket (SO_PEERCRED).
//!
//! The proxy's "node B" is this test process speaking the data plane with the node's own
//! client code (`Peers`) and the cluster's secret: the frames are exactly what a node
//! sends, and a real node cannot be told to send its data plane through a proxy (it
//! dials the address its peer announces on gossip).

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::unix::process::CommandExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::cluster::{SECRET, TestNode, dump_logs, free_data_addr, wait_for_members};
use common::{TestDir, child};
use ephpm::cluster::crypto::handshake::magic;
use ephpm::cluster::keyring::Keyring;
use ephpm::cluster::peers::Peers;
use ephpm::cluster::placement::Members;
use ephpm::store::Store;
use ephpm::store::cluster::ClusterStore;
use ephpm::wire::{self, Op, Response, Route};

fn key_owned_by(n: u8, node: &str, tag: &str) -> Vec<u8> {
    let members = Members::new((1..=n).map(|i| Arc::from(format!("node-{i}"))));
    (0..)
        .map(|i| format!("{tag}:{i}").into_bytes())
        .find(|k| &*members.owner(k).unwrap() == node)
        .unwrap()
}

fn ids(n: u8) -> Vec<String> {
    (1..=n).map(|i| format!("node-{i}")).collect()
}

fn string(s: &ClusterStore, key: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    s.get(key, &mut out).unwrap().map(|_| out)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn secrets() -> Vec<Vec<u8>> {
    vec![SECRET.as_bytes().to_vec()]
}

/// Polls `f` every 100 ms for up to `secs` seconds until it returns `Some`.
fn within<T>(secs: u64, what: &str, dir: &TestDir, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return v;
        }
        if Instant::now() > deadline {
            dump_logs(&dir.0);
            panic!("never happened: {what}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// What the proxy does to the next request frame it forwards.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Tamper {
    Nothing,
    /// The frame, then the same frame again.
    Duplicate,
    /// The connection's first request frame again, then the frame.
    EarlierFirst,
}

/// A TCP proxy on 127.0.0.1 in front of `upstream`: it records what each client sends
/// (the hello, then frame by frame) and tampers with a frame when told to.
struct Proxy {
    addr: SocketAddr,
    recorded: Arc<Mutex<Vec<Vec<u8>>>>,
    tamper: Arc<Mutex<Tamper>>,
}

impl Proxy {
    fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let proxy = Proxy {
            addr: listener.local_addr().unwrap(),
            recorded: Arc::default(),
            tamper: Arc::new(Mutex::new(Tamper::Nothing)),
        };
        let (recorded, tamper) = (proxy.recorded.clone(), proxy.tamper.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let server = TcpStream::connect(upstream).unwrap();
                let (mut back_from, mut back_to) =
                    (server.try_clone().unwrap(), client.try_clone().unwrap());
                std::thread::spawn(move || std::io::copy(&mut back_from, &mut back_to));
                let (recorded, tamper) = (recorded.clone(), tamper.clone());
                std::thread::spawn(move || forward(client, server, &recorded, &tamper));
            }
        });
        proxy
    }

    fn tamper_next(&self, t: Tamper) {
        *self.tamper.lock().unwrap() = t;
    }
}

fn forward(
    mut from: TcpStream,
    mut to: TcpStream,
    recorded: &Mutex<Vec<Vec<u8>>>,
    tamper: &Mutex<Tamper>,
) {
    let index = {
        let mut r = recorded.lock().unwrap();
        r.push(Vec::new());
        r.len() - 1
    };
    let mut hello = [0u8; 40];
    if from.read_exact(&mut hello).is_err() || to.write_all(&hello).is_err() {
        return;
    }
    recorded.lock().unwrap()[index].extend_from_slice(&hello);
    let mut frames: Vec<Vec<u8>> = Vec::new();
    loop {
        let mut len = [0u8; 4];
        if from.read_exact(&mut len).is_err() {
            let _ = to.shutdown(std::net::Shutdown::Write);
            return;
        }
        let mut frame = len.to_vec();
        frame.resize(4 + u32::from_be_bytes(len) as usize, 0);
        if from.read_exact(&mut frame[4..]).is_err() {
            return;
        }
        recorded.lock().unwrap()[index].extend_from_slice(&frame);
        frames.push(frame.clone());
        // frames[0] is the handshake's confirmation; requests follow.
        let t = std::mem::replace(&mut *tamper.lock().unwrap(), Tamper::Nothing);
        let out = match t {
            Tamper::EarlierFirst if frames.len() > 2 => [frames[1].clone(), frame].concat(),
            Tamper::Duplicate if frames.len() > 1 => [frame.clone(), frame].concat(),
            other => {
                *tamper.lock().unwrap() = other;
                frame
            }
        };
        if to.write_all(&out).is_err() {
            return;
        }
    }
}

/// Writes what a client once sent on a new connection and reads until the node hangs
/// up: whatever it answers.
fn replay(addr: SocketAddr, bytes: &[u8]) -> usize {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = c.write_all(bytes);
    let mut answer = Vec::new();
    let _ = c.read_to_end(&mut answer);
    answer.len()
}

#[test]
fn recorded_frames_replayed_execute_nothing_twice_and_are_counted() {
    let dir = TestDir::new("replay");
    let a_data = free_data_addr(1);
    let a = TestNode::start(&dir, 1, &[], &["--data", &a_data.to_string()]);
    let b = TestNode::start(&dir, 2, &[a.gossip], &[]);
    wait_for_members(&a, &ids(2));
    wait_for_members(&b, &ids(2));
    let counter = key_owned_by(2, "node-1", "replay-n");
    let value = key_owned_by(2, "node-1", "replay-v");
    let proxy = Proxy::start(a_data);
    let rt = runtime();
    let peers = Peers::new(std::sync::Arc::new(Keyring::new(&secrets())));
    let ask =
        |op: Op| rt.block_on(peers.ask((proxy.addr, 2), Route::Owner, &op, Duration::from_secs(3)));
    let incr = || Op::IncrBy {
        key: counter.clone(),
        by: 1,
        ttl: None,
    };
    let set = |v: &[u8]| Op::Set {
        key: value.clone(),
        value: v.to_vec(),
        ttl: None,
    };
    assert_eq!(ask(incr()), Ok(Response::Int(1)));
    ask(set(b"old")).unwrap();
    ask(set(b"NEW")).unwrap();
    let stores = [a.store(), b.store()];
    let count = |s: &ClusterStore| s.incr_by(&counter, 0, None).unwrap();

    // Replayed on new connections: the handshake of each meets a fresh nonce.
    let recorded = proxy.recorded.lock().unwrap().clone();
    assert!(!recorded.is_empty() && recorded[0].len() > 40);
    let mut answered = 0;
    for _ in 0..5 {
        for conn in &recorded {
            answered = answered.max(replay(a_data, conn));
        }
    }
    for s in &stores {
        assert_eq!(count(s), 1, "an increment replayed counts once");
        assert_eq!(
            string(s, &value).as_deref(),
            Some(&b"NEW"[..]),
            "no value goes back"
        );
    }
    assert!(answered <= 40, "only the node's hello comes back");

    // On the same connection: a request sent twice executes once, and an earlier
    // request put before the next one ends the connection before either executes.
    proxy.tamper_next(Tamper::Duplicate);
    assert_eq!(ask(incr()), Ok(Response::Int(2)));
    // The node hung up after the duplicate; a request sent just before it did is lost.
    within(10, "a set after the duplicate", &dir, || {
        ask(set(b"NEWER")).ok()
    });
    proxy.tamper_next(Tamper::EarlierFirst);
    assert!(ask(set(b"NEWEST")).is_err(), "the node hangs up");
    for s in &stores {
        assert_eq!(count(s), 2);
        assert_eq!(string(s, &value).as_deref(), Some(&b"NEWER"[..]));
    }
    // The node's periodic line (every 10 s) counts both kinds of refusal.
    within(30, "the refusals in node-1's log", &dir, || {
        let log = a.log();
        (log.contains("failed authentication") && log.contains("replayed or out of order"))
            .then_some(())
    });
}

/// A UDP relay on 127.0.0.9: what node B sends to it goes to node A and back, and is
/// recorded while `recording` is on.
struct Relay {
    addr: SocketAddr,
    socket: UdpSocket,
    to_b: Arc<Mutex<Option<SocketAddr>>>,
    from_b: Arc<Mutex<Vec<Vec<u8>>>>,
    recording: Arc<AtomicBool>,
}

impl Relay {
    fn start(a: SocketAddr) -> Relay {
        let socket = UdpSocket::bind("127.0.0.9:0").unwrap();
        let relay = Relay {
            addr: socket.local_addr().unwrap(),
            socket: socket.try_clone().unwrap(),
            to_b: Arc::default(),
            from_b: Arc::default(),
            recording: Arc::new(AtomicBool::new(true)),
        };
        let (to_b, from_b, recording) = (
            relay.to_b.clone(),
            relay.from_b.clone(),
            relay.recording.clone(),
        );
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 65_536];
            while let Ok((n, from)) = socket.recv_from(&mut buf) {
                let d = &buf[..n];
                if from == a {
                    if let Some(b) = *to_b.lock().unwrap() {
                        let _ = socket.send_to(d, b);
                    }
                } else {
                    if recording.load(Ordering::Relaxed) {
                        from_b.lock().unwrap().push(d.to_vec());
                    }
                    let _ = socket.send_to(d, a);
                }
            }
        });
        relay
    }
}

#[test]
fn recorded_gossip_played_again_changes_nothing_and_is_counted() {
    let dir = TestDir::new("gossip-replay");
    let a = TestNode::start(&dir, 1, &[], &[]);
    let relay = Relay::start(a.gossip);
    let mut b = TestNode::start(&dir, 2, &[relay.addr], &[]);
    *relay.to_b.lock().unwrap() = Some(b.gossip);
    wait_for_members(&a, &ids(2));
    wait_for_members(&b, &ids(2));
    // A small key node 2 owns: it travels in node 2's gossip state.
    let key = key_owned_by(2, "node-2", "gossip-replay");
    b.store()
        .set(&key, ephpm::store::Value::Str(b"v1"), None)
        .unwrap();
    within(20, "the key in node-1's segment", &dir, || {
        (a.segment_state(&key) == Some("value")).then_some(())
    });
    within(20, "datagrams of node 2 through the relay", &dir, || {
        (relay.from_b.lock().unwrap().len() >= 20).then_some(())
    });
    relay.recording.store(false, Ordering::Relaxed);
    let recorded = relay.from_b.lock().unwrap().clone();

    assert!(a.store().del(&key).unwrap());
    within(20, "the delete in node-1's segment", &dir, || {
        (a.segment_state(&key) != Some("value")).then_some(())
    });
    b.kill();
    wait_for_members(&a, &ids(1));

    for _ in 0..3 {
        for d in &recorded {
            relay.socket.send_to(d, a.gossip).unwrap();
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(
        a.store().members().unwrap(),
        ids(1),
        "node 2 is not revived"
    );
    assert_ne!(
        a.segment_state(&key),
        Some("value"),
        "the deleted key does not come back"
    );
    assert_eq!(string(&a.store(), &key), None);
    within(
        30,
        "the replayed datagrams counted in node-1's log",
        &dir,
        || a.log().contains("replayed or out of order").then_some(()),
    );
}

#[test]
fn a_connection_flood_under_ulimit_128_ends_and_the_node_serves_again() {
    let dir = TestDir::new("flood");
    let a_data = free_data_addr(1);
    let a = TestNode::start_limited(&dir, 1, &[], &["--data", &a_data.to_string()], Some(128));
    wait_for_members(&a, &ids(1));
    let rt = runtime();
    // 200 idle connections from four addresses (50 each, under the per-address cap):
    // more than the node has descriptors for.
    let flood: Vec<tokio::net::TcpStream> = rt.block_on(async {
        let mut held = Vec::new();
        for i in 0..200u32 {
            let s = tokio::net::TcpSocket::new_v4().unwrap();
            s.bind(SocketAddr::from(([127, 0, 0, 50 + (i % 4) as u8], 0)))
                .unwrap();
            if let Ok(Ok(c)) = tokio::time::timeout(Duration::from_secs(2), s.connect(a_data)).await
            {
                held.push(c);
            }
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        held
    });
    assert!(
        flood.len() > 128,
        "only {} connections got through",
        flood.len()
    );
    drop(flood);
    // A new client (a new connection, not one kept from before the flood) is served.
    let key = key_owned_by(1, "node-1", "flood");
    within(
        60,
        "an increment through the node after the flood",
        &dir,
        || {
            let peers = Peers::new(std::sync::Arc::new(Keyring::new(&secrets())));
            let op = Op::IncrBy {
                key: key.clone(),
                by: 1,
                ttl: None,
            };
            let r = rt.block_on(peers.ask((a_data, 2), Route::Owner, &op, Duration::from_secs(2)));
            matches!(r, Ok(Response::Int(_))).then_some(())
        },
    );
    assert!(a.store().incr_by(&key, 1, None).unwrap() >= 2);
}

#[test]
fn length_prefixes_of_48_mib_before_authentication_allocate_nothing() {
    let dir = TestDir::new("prefix");
    let a_data = free_data_addr(1);
    let a = TestNode::start(&dir, 1, &[], &["--data", &a_data.to_string()]);
    wait_for_members(&a, &ids(1));
    std::thread::sleep(Duration::from_millis(500));
    let before = a.rss_kib();
    // Eight peers that never authenticate, each announcing a 48 MiB frame and sending
    // 47 MiB of it: half right away, half after a well-formed hello.
    let senders: Vec<_> = (0..8)
        .map(|i| {
            std::thread::spawn(move || {
                let mut c = TcpStream::connect(a_data).unwrap();
                c.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
                if i % 2 == 1 {
                    let mut hello = magic(2).to_vec();
                    hello.extend_from_slice(&[7u8; 32]);
                    let _ = c.write_all(&hello);
                }
                let _ = c.write_all(&(48u32 << 20).to_be_bytes());
                let chunk = vec![0x5au8; 1 << 20];
                for _ in 0..47 {
                    if c.write_all(&chunk).is_err() {
                        break;
                    }
                }
                c // held open while the node's memory is read
            })
        })
        .collect();
    let held: Vec<TcpStream> = senders.into_iter().map(|t| t.join().unwrap()).collect();
    std::thread::sleep(Duration::from_millis(500));
    let after = a.rss_kib();
    drop(held);
    assert!(
        after <= before + 32 * 1024,
        "RSS grew from {before} KiB to {after} KiB"
    );
}

/// The child of `a_client_of_another_user_is_refused_by_the_node_socket`, as uid 65534:
/// asks the node at the path in its job for the members, and says what came back.
#[test]
fn child_foreign_client() {
    let Some(path) = child::job() else { return };
    let mut c = match std::os::unix::net::UnixStream::connect(&path) {
        Ok(c) => c,
        Err(e) => return println!("foreign client: cannot connect ({e})"),
    };
    let answer = (|| {
        c.set_read_timeout(Some(Duration::from_secs(5)))?;
        wire::write_frame(&mut c, &wire::encode_request(Route::Client, &Op::Members))?;
        wire::read_frame(&mut c)
    })();
    match answer {
        Ok(_) => println!("foreign client: answered"),
        Err(e) => println!("foreign client: refused ({e})"),
    }
}

#[test]
fn a_client_of_another_user_is_refused_by_the_node_socket() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: switching to another uid needs root");
        return;
    }
    let dir = TestDir::new("peercred");
    let a = TestNode::start(&dir, 1, &[], &[]);
    wait_for_members(&a, &ids(1));
    let socket = ephpm::wire::socket_path(&a.options()).unwrap();
    // The node's socket is 0600 in the user's 0700 directory; the test opens both (and
    // the test directory above) so that uid 65534 reaches the socket at all, leaving
    // SO_PEERCRED as the only guard, and closes them again afterwards.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
    };
    let private = socket.parent().unwrap();
    mode(&dir.0, 0o755);
    mode(private, 0o755);
    mode(&socket, 0o666);
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "child_foreign_client",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(child::JOB, &socket);
    // SAFETY: setgroups/setgid/setuid with plain integers, async-signal-safe between
    // fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(65534) != 0
                || libc::setuid(65534) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    mode(&socket, 0o600);
    mode(private, 0o700);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("foreign client: refused"),
        "the child of uid 65534: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The node's own user is still served, and the refusal is counted.
    assert_eq!(a.store().members().unwrap(), ids(1));
    within(30, "the refusal in node-1's log", &dir, || {
        a.log()
            .contains("1 socket clients of another user")
            .then_some(())
    });
}
