//! `ephpm-resp`, the store over the Redis protocol, as a Redis client and a PHP process
//! (the store opened directly) see it together: one data model, one winner of SET NX,
//! the same token locks, WATCH seeing a PHP write; and as an attacker sees it: AUTH
//! before anything on TCP, tight bounds before AUTH, another uid refused on the socket,
//! garbage and idle or slow clients that never stop the others.

mod common;

use std::sync::{Arc, Barrier};
use std::time::Duration;

use common::child::Rng;
use common::resp_client::{Client, Reply, Server};
use ephpm::store::{Fetched, Store, Value};

#[test]
fn a_redis_client_and_php_share_one_data_model() {
    let server = Server::start(&[]);
    let php = server.store();
    let mut c = server.client();
    php.set(b"php:int", Value::Int(41), None).unwrap();
    php.set(b"php:float", Value::Float(1.5), None).unwrap();
    php.set(b"php:true", Value::Bool(true), None).unwrap();
    php.set(b"php:array", Value::Serialized(b"a:0:{}"), None)
        .unwrap();
    assert_eq!(c.call(&["GET", "php:int"]), Reply::bulk("41"));
    assert_eq!(c.call(&["GET", "php:float"]), Reply::bulk("1.5"));
    assert_eq!(c.call(&["GET", "php:true"]), Reply::bulk("1"));
    assert_eq!(c.call(&["GET", "php:array"]), Reply::bulk("a:0:{}"));
    assert_eq!(
        c.call(&["TYPE", "php:array"]),
        Reply::Simple("string".into())
    );
    // INCR and Kv::increment count on one integer.
    assert_eq!(c.call(&["INCR", "php:int"]), Reply::Int(42));
    assert_eq!(php.incr_by(b"php:int", 8, None).unwrap(), 50);
    assert_eq!(c.call(&["INCRBY", "php:int", "-10"]), Reply::Int(40));
    // What a Redis client writes is a string to PHP; a decimal one counts.
    assert_eq!(c.call(&["SET", "redis:str", "hello"]), Reply::ok());
    let mut out = Vec::new();
    let hit = php.get(b"redis:str", &mut out).unwrap().unwrap();
    assert_eq!((hit.value, out.as_slice()), (Fetched::Str, &b"hello"[..]));
    assert_eq!(c.call(&["SET", "redis:n", "7"]), Reply::ok());
    assert_eq!(php.incr_by(b"redis:n", 1, None).unwrap(), 8);
    assert_eq!(c.call(&["GET", "redis:n"]), Reply::bulk("8"));
    // Lifetimes agree too.
    assert_eq!(c.call(&["SET", "ttl", "x", "EX", "100"]), Reply::ok());
    match php.ttl(b"ttl").unwrap() {
        ephpm::store::KeyTtl::Remaining(d) => assert!(d > Duration::from_secs(98)),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        c.call(&["INCR", "redis:str"]),
        Reply::Error("ERR value is not an integer or out of range".into())
    );
}

#[test]
fn set_nx_has_one_winner_among_redis_clients_and_php_processes() {
    let server = Arc::new(Server::start(&[]));
    let php = Arc::new(server.store());
    const CLIENTS: usize = 6;
    const ROUNDS: usize = 30;
    let barrier = Arc::new(Barrier::new(CLIENTS + 2));
    let mut threads = Vec::new();
    for i in 0..CLIENTS {
        let (server, barrier) = (server.clone(), barrier.clone());
        threads.push(std::thread::spawn(move || {
            let mut c = server.client();
            let mut won = Vec::new();
            for round in 0..ROUNDS {
                barrier.wait();
                let key = format!("nx:{round}");
                if c.call(&["SET", &key, &format!("resp-{i}"), "NX", "PX", "60000"]) == Reply::ok()
                {
                    won.push(round);
                }
            }
            won
        }));
    }
    {
        let (php, barrier) = (php.clone(), barrier.clone());
        threads.push(std::thread::spawn(move || {
            let mut won = Vec::new();
            for round in 0..ROUNDS {
                barrier.wait();
                let key = format!("nx:{round}");
                if php
                    .set_nx(
                        key.as_bytes(),
                        Value::Str(b"php"),
                        Some(Duration::from_secs(60)),
                    )
                    .unwrap()
                    == ephpm::store::SetNx::Inserted
                {
                    won.push(round);
                }
            }
            won
        }));
    }
    for _ in 0..ROUNDS {
        barrier.wait();
    }
    let mut wins = vec![0; ROUNDS];
    for t in threads {
        for round in t.join().unwrap() {
            wins[round] += 1;
        }
    }
    assert!(wins.iter().all(|&w| w == 1), "winners per round: {wins:?}");
}

#[test]
fn a_lock_taken_over_resp_excludes_memolocks_and_fences_keep_growing() {
    let server = Server::start(&[]);
    let php = server.store();
    let mut c = server.client();
    let Reply::Int(f1) = c.call(&["EPHPM.LOCK", "job", "python-token-0001", "10000"]) else {
        panic!("the lock was free");
    };
    assert_eq!(
        php.lock_acquire(b"job", b"php-token", Duration::from_secs(10))
            .unwrap(),
        None
    );
    assert_eq!(
        c.call(&["EPHPM.UNLOCK", "job", "somebody-else"]),
        Reply::Int(0)
    );
    assert_eq!(
        c.call(&["EPHPM.EXTEND", "job", "python-token-0001", "20000"]),
        Reply::Int(1)
    );
    assert_eq!(
        c.call(&["EPHPM.UNLOCK", "job", "python-token-0001"]),
        Reply::Int(1)
    );
    let f2 = php
        .lock_acquire(b"job", b"php-token", Duration::from_secs(10))
        .unwrap()
        .expect("free now");
    assert!(f2 > f1 as u64);
    assert_eq!(
        c.call(&["EPHPM.LOCK", "job", "python-token-0002", "10000"]),
        Reply::Bulk(None)
    );
    assert_eq!(
        c.call(&["EPHPM.EXTEND", "job", "python-token-0002", "10000"]),
        Reply::Int(0)
    );
    assert!(php.lock_release(b"job", b"php-token").unwrap());
    let Reply::Int(f3) = c.call(&["EPHPM.LOCK", "job", "python-token-0003", "10000"]) else {
        panic!("released");
    };
    assert!(f3 as u64 > f2);
    // Compare-and-delete.
    c.call(&["SET", "owned", "mine"]);
    assert_eq!(c.call(&["DELIFEQ", "owned", "theirs"]), Reply::Int(0));
    assert_eq!(c.call(&["DELIFEQ", "owned", "mine"]), Reply::Int(1));
}

#[test]
fn watch_sees_a_php_write_and_exec_applies_the_queue() {
    let server = Server::start(&[]);
    let php = server.store();
    let mut c = server.client();
    assert_eq!(c.call(&["WATCH", "w"]), Reply::ok());
    php.set(b"w", Value::Int(1), None).unwrap();
    assert_eq!(c.call(&["MULTI"]), Reply::ok());
    assert_eq!(c.call(&["SET", "w", "2"]), Reply::Simple("QUEUED".into()));
    assert_eq!(c.call(&["EXEC"]), Reply::Array(None));
    assert_eq!(c.call(&["GET", "w"]), Reply::bulk("1"));
    c.call(&["MULTI"]);
    c.call(&["INCR", "w"]);
    c.call(&["INCR", "w"]);
    assert_eq!(
        c.call(&["EXEC"]),
        Reply::Array(Some(vec![Reply::Int(2), Reply::Int(3)]))
    );
    c.call(&["MULTI"]);
    assert!(c.call(&["NOSUCHCOMMAND"]).is_error());
    assert!(
        c.call(&["EXEC"]).is_error(),
        "a refused command dooms the EXEC"
    );
}

/// What a server's own test suite sends before each block (Redis 8.0: SCRIPT FLUSH,
/// CONFIG RESETSTAT, CONFIG GET *) is answered, and an encoding setting CONFIG SET takes
/// is shown by CONFIG GET; every other setting is refused and stays as it was.
#[test]
fn resetstat_zeroes_infos_counters_and_only_encoding_settings_are_taken() {
    let server = Server::start(&[]);
    let mut c = server.client();
    let stat = |c: &mut Client, name: &str| -> u64 {
        let Reply::Bulk(Some(info)) = c.call(&["INFO", "stats"]) else {
            panic!("INFO")
        };
        let info = String::from_utf8(info).unwrap();
        info.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .unwrap_or_else(|| panic!("{name} in {info}"))
            .parse()
            .unwrap()
    };
    c.call(&["SET", "k", "v"]);
    c.call(&["GET", "k"]);
    c.call(&["GET", "missing"]);
    assert!(stat(&mut c, "keyspace_hits") >= 1);
    assert!(stat(&mut c, "total_commands_processed") >= 3);
    assert_eq!(c.call(&["SCRIPT", "FLUSH"]), Reply::ok());
    assert_eq!(c.call(&["CONFIG", "RESETSTAT"]), Reply::ok());
    assert_eq!(stat(&mut c, "keyspace_hits"), 0);
    assert_eq!(stat(&mut c, "keyspace_misses"), 0);
    let since = stat(&mut c, "total_commands_processed");
    assert!(since <= 4, "only RESETSTAT and the INFOs since: {since}");
    c.call(&["GET", "k"]);
    assert_eq!(stat(&mut c, "keyspace_hits"), 1);
    assert_eq!(
        c.call(&["CONFIG", "SET", "list-max-listpack-size", "-1"]),
        Reply::ok()
    );
    assert_eq!(
        c.call(&["CONFIG", "GET", "list-max-listpack-size"]),
        Reply::Array(Some(vec![
            Reply::bulk("list-max-listpack-size"),
            Reply::bulk("-1")
        ]))
    );
    assert!(c.call(&["CONFIG", "SET", "maxclients", "1"]).is_error());
    assert!(
        c.call(&["CONFIG", "SET", "list-max-listpack-size", "5", "hz", "100"])
            .is_error()
    );
    assert_eq!(
        c.call(&["CONFIG", "GET", "list-max-listpack-size"]),
        Reply::Array(Some(vec![
            Reply::bulk("list-max-listpack-size"),
            Reply::bulk("-1")
        ])),
        "a refused CONFIG SET changes nothing"
    );
    assert!(
        matches!(c.call(&["CONFIG", "GET", "maxclients"]), Reply::Array(Some(v)) if v[1] != Reply::bulk("1"))
    );
}

#[test]
fn published_messages_reach_subscribers() {
    let server = Server::start(&[]);
    let mut sub = server.client();
    sub.call(&["SUBSCRIBE", "news"]);
    sub.call(&["PSUBSCRIBE", "n*"]);
    let mut publisher = server.client();
    assert_eq!(publisher.call(&["PUBLISH", "news", "hello"]), Reply::Int(2));
    let got = [sub.read().unwrap(), sub.read().unwrap()];
    assert!(got.contains(&Reply::Array(Some(vec![
        Reply::bulk("message"),
        Reply::bulk("news"),
        Reply::bulk("hello")
    ]))));
    assert!(
        sub.call(&["GET", "x"]).is_error(),
        "a RESP2 subscriber may not GET"
    );
}

fn secret_file(dir: &std::path::Path) -> (std::path::PathBuf, String) {
    use std::os::unix::fs::OpenOptionsExt;
    let password = "dGVzdC1wYXNzd29yZC0xMjgtYml0cy1sb25n".to_string();
    let path = dir.join("secret");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut f, format!("{password}\n").as_bytes()).unwrap();
    (path, password)
}

#[test]
fn tcp_refuses_every_command_but_auth_hello_and_quit_until_auth() {
    let dir = common::TestDir::new("secret");
    let (path, password) = secret_file(&dir.0);
    let server = Server::start(&[
        "--tcp",
        "127.0.0.1:0",
        "--secret-file",
        path.to_str().unwrap(),
    ]);
    let addr = server.tcp.clone().expect("a TCP address");
    let mut c = Client::tcp(&addr);
    for command in [
        &["GET", "k"][..],
        &["SET", "k", "v"],
        &["KEYS", "*"],
        &["EPHPM.LOCK", "a", "b", "100"],
        &["INFO"],
    ] {
        assert_eq!(
            c.call(command),
            Reply::Error("NOAUTH Authentication required.".into()),
            "{command:?}"
        );
    }
    assert!(c.call(&["AUTH", "wrong-password"]).is_error());
    assert!(
        c.call(&["AUTH", "someone", &password]).is_error(),
        "the only user is default"
    );
    assert_eq!(c.call(&["AUTH", &password]), Reply::ok());
    assert_eq!(c.call(&["SET", "k", "v"]), Reply::ok());
    // Before AUTH a client may not make the server buffer much: Redis' own bounds.
    let mut big = Client::tcp(&addr);
    big.send_raw(b"*11\r\n");
    assert!(matches!(big.read(), Some(Reply::Error(e)) if e.contains("Protocol error")));
    assert_eq!(big.read(), None, "the connection is closed");
    let mut bulk = Client::tcp(&addr);
    bulk.send_raw(b"*1\r\n$16385\r\n");
    assert!(matches!(bulk.read(), Some(Reply::Error(e)) if e.contains("Protocol error")));
    assert_eq!(bulk.read(), None);
}

#[test]
fn another_uid_is_refused_on_the_socket_even_when_its_mode_lets_it_connect() {
    let server = Server::start(&[]);
    // An operator's mistake: the directory and the socket opened to everyone.
    use std::os::unix::fs::PermissionsExt;
    let user_dir = server.socket.parent().unwrap();
    std::fs::set_permissions(user_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&server.socket, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "redis-cli",
            "-s",
        ])
        .arg(&server.socket)
        .args(["SET", "pwned", "1"])
        .output()
        .expect("run redis-cli as nobody");
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("NOPERM uid 65534"), "nobody was told: {said}");
    assert!(!server.store().exists(b"pwned").unwrap());
    // The owner still gets in.
    assert_eq!(
        server.client().call(&["PING"]),
        Reply::Simple("PONG".into())
    );
}

#[test]
fn garbage_never_crashes_the_server_nor_stops_other_clients() {
    let mut server = Server::start(&[]);
    let mut rng = Rng::seeded();
    let mut steady = server.client();
    for round in 0..300 {
        let mut junk = Client::unix(&server.socket);
        let len = rng.below(4096) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        // Half the rounds look like requests, to get past the first byte.
        if round % 2 == 0 {
            let prefix: &[u8] = [
                &b"*3\r\n$3\r\nSET\r\n$"[..],
                b"*2\r\n$-1\r\n",
                b"*9999999999\r\n",
                b"$5\r\n",
                b"SET \"a",
            ][rng.below(5) as usize];
            bytes.splice(0..0, prefix.iter().copied());
        }
        junk.send_raw(&bytes);
        drop(junk);
        assert_eq!(
            steady.call(&["SET", "steady", &round.to_string()]),
            Reply::ok()
        );
    }
    assert!(server.alive());
    assert_eq!(server.client().call(&["GET", "steady"]), Reply::bulk("299"));
}

#[test]
fn a_thousand_idle_connections_and_a_slow_client_do_not_stop_others() {
    let server = Server::start(&[]);
    let idle: Vec<Client> = (0..1000).map(|_| server.client()).collect();
    let mut slow = server.client();
    let request = b"*3\r\n$3\r\nSET\r\n$4\r\nslow\r\n$4\r\ndone\r\n";
    let mut c = server.client();
    for (i, byte) in request.iter().enumerate() {
        slow.send_raw(&[*byte]);
        assert_eq!(c.call(&["INCR", "busy"]), Reply::Int(i as i64 + 1));
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(slow.read(), Some(Reply::ok()));
    let Reply::Bulk(Some(list)) = c.call(&["CLIENT", "LIST"]) else {
        panic!()
    };
    assert!(
        list.split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .count()
            >= 1002
    );
    drop(idle);
}

#[test]
fn max_clients_refuses_the_one_too_many_and_keeps_serving() {
    let server = Server::start(&["--max-clients", "3"]);
    let mut kept: Vec<Client> = (0..3).map(|_| server.client()).collect();
    for c in &mut kept {
        assert_eq!(c.call(&["PING"]), Reply::Simple("PONG".into()));
    }
    let mut extra = server.client();
    assert_eq!(
        extra.read(),
        Some(Reply::Error("ERR max number of clients reached".into()))
    );
    drop(kept.pop());
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        server.client().call(&["PING"]),
        Reply::Simple("PONG".into())
    );
}

#[test]
fn unknown_commands_and_subcommands_keep_the_connection_open() {
    let server = Server::start(&[]);
    let mut c = server.client();
    assert!(c.call(&["CLIENT", "SETINFO", "LIB-NAME", "redis-py"]) == Reply::ok());
    assert!(c.call(&["CLIENT", "NOSUCH"]).is_error());
    assert!(c.call(&["LPUSH", "list", "x"]).is_error());
    assert!(c.call(&["GET"]).is_error());
    assert_eq!(c.call(&["PING"]), Reply::Simple("PONG".into()));
}

#[test]
fn an_idle_client_is_closed_after_the_timeout_and_a_busy_one_is_not() {
    let server = Server::start(&["--timeout", "1"]);
    let mut idle = server.client();
    let mut busy = server.client();
    assert_eq!(idle.call(&["PING"]), Reply::Simple("PONG".into()));
    for _ in 0..6 {
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(busy.call(&["PING"]), Reply::Simple("PONG".into()));
    }
    assert_eq!(idle.read(), None, "the idle client was closed");
}

/// Options that contradict each other are usage errors (exit 2, the reason on stderr,
/// nothing served); `--help` is the usage on stdout.
#[test]
fn contradictory_options_are_usage_errors_with_the_reason() {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_ephpm-resp"))
            .args(args)
            .output()
            .expect("ephpm-resp runs")
    };
    for (args, says) in [
        (&["--tcp", "127.0.0.1:0"][..], "--tcp needs --secret-file"),
        (
            &["--tcp", "10.0.0.1:6379", "--allow-insecure-no-auth"],
            "for loopback addresses only, not 10.0.0.1:6379",
        ),
        (&["--allow-insecure-no-auth"], "--tcp <IP:PORT>"),
        (&["--no-socket"], "--no-socket leaves nothing to listen on"),
        (&["--group", "0"], "--group needs --socket"),
        (
            &["--max-clients", "0"],
            "invalid value '0' for '--max-clients <N>'",
        ),
        (
            &["--store", "../x"],
            "invalid value '../x' for '--store <NAME>'",
        ),
    ] {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let help = run(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("Usage: ephpm-resp [OPTIONS]"));
}

/// `--group NAME` looks the group up by name (nix) and opens the socket to it: owned by
/// that group, mode 0660; a group the host has not is refused (exit 1) before binding.
#[test]
fn group_names_are_looked_up_and_the_socket_is_opened_to_that_group() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = common::TestDir::new("resp-group");
    let socket = dir.0.join("shared.sock");
    // The group "daemon" (gid 1 on Debian): one the test's uid need not be in.
    let server = Server::start(&["--socket", socket.to_str().unwrap(), "--group", "daemon"]);
    let mut c = Client::unix(&socket);
    assert_eq!(c.call(&["PING"]), Reply::Simple("PONG".into()));
    let meta = std::fs::metadata(&socket).expect("the socket");
    drop(server);
    assert_eq!(meta.gid(), 1, "owned by daemon's gid");
    assert_eq!(meta.permissions().mode() & 0o777, 0o660);
    let missing = std::process::Command::new(env!("CARGO_BIN_EXE_ephpm-resp"))
        .args(["--shm-dir", dir.0.to_str().unwrap(), "--socket"])
        .arg(dir.0.join("other.sock"))
        .args(["--group", "no-such-group-here"])
        .output()
        .expect("ephpm-resp runs");
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&missing.stderr)
            .contains("--group no-such-group-here: no such group")
    );
    assert!(!dir.0.join("other.sock").exists());
}
