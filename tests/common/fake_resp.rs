//! A small fake Redis, to test what ephpm does with servers Debian does not ship: it
//! speaks RESP2 over a unix socket, keeps strings in a map (no expiry), knows the
//! commands the native lock paths send, claims exactly the optional commands it is told
//! to have (`COMMAND INFO` answers nil for the others; "IFEQ" is `SET … IFEQ`, which
//! `COMMAND DOCS SET` shows), runs ephpm's Lua scripts by the
//! `-- ephpm:NAME` line that starts them, and logs every command it gets.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct State {
    data: HashMap<Vec<u8>, Vec<u8>>,
    scripts: HashMap<String, String>,
    log: Vec<String>,
}

pub struct FakeRedis {
    pub socket: PathBuf,
    state: Arc<Mutex<State>>,
    _dir: super::TestDir,
}

impl FakeRedis {
    /// Starts a fake that has the optional commands `has` (e.g. `["DELEX"]`).
    pub fn start(has: &'static [&'static str]) -> FakeRedis {
        Self::start_refusing(has, &[])
    }

    /// The same, answering the commands in `refused` with a NOPERM error, as a server
    /// whose ACL forbids them does.
    pub fn start_refusing(
        has: &'static [&'static str],
        refused: &'static [&'static str],
    ) -> FakeRedis {
        let dir = super::TestDir::new("fake-resp");
        let socket = dir.0.join("fake.sock");
        let listener = UnixListener::bind(&socket).expect("bind fake socket");
        let state = Arc::new(Mutex::new(State::default()));
        let shared = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = shared.clone();
                std::thread::spawn(move || serve(stream, has, refused, &state));
            }
        });
        FakeRedis {
            socket,
            state,
            _dir: dir,
        }
    }

    pub fn dsn(&self) -> String {
        format!("unix://{}", self.socket.display())
    }

    /// The commands received so far, each as its name and its words after it.
    pub fn log(&self) -> Vec<String> {
        self.state.lock().unwrap().log.clone()
    }
}

fn serve(stream: UnixStream, has: &[&str], refused: &[&str], state: &Mutex<State>) {
    let mut out = stream.try_clone().expect("clone stream");
    let mut input = BufReader::new(stream);
    while let Some(args) = read_command(&mut input) {
        let name = String::from_utf8_lossy(&args[0]).to_uppercase();
        let reply = if refused.contains(&name.as_str()) {
            format!("-NOPERM this user has no permissions to run the '{name}' command\r\n")
                .into_bytes()
        } else {
            answer(&args, has, &mut state.lock().unwrap())
        };
        if out.write_all(&reply).is_err() {
            return;
        }
    }
}

fn read_command(input: &mut impl BufRead) -> Option<Vec<Vec<u8>>> {
    let mut line = String::new();
    input.read_line(&mut line).ok().filter(|&n| n > 0)?;
    let n: usize = line.trim().strip_prefix('*')?.parse().ok()?;
    let mut args = Vec::with_capacity(n);
    for _ in 0..n {
        line.clear();
        input.read_line(&mut line).ok()?;
        let len: usize = line.trim().strip_prefix('$')?.parse().ok()?;
        let mut arg = vec![0u8; len + 2];
        input.read_exact(&mut arg).ok()?;
        arg.truncate(len);
        args.push(arg);
    }
    Some(args)
}

fn bulk(b: &[u8]) -> Vec<u8> {
    let mut r = format!("${}\r\n", b.len()).into_bytes();
    r.extend_from_slice(b);
    r.extend_from_slice(b"\r\n");
    r
}

const NIL: &[u8] = b"$-1\r\n";
const OK: &[u8] = b"+OK\r\n";

fn int(n: i64) -> Vec<u8> {
    format!(":{n}\r\n").into_bytes()
}

/// `SET … IFEQ` came with DELEX and DELIFEQ; "IFEQ" alone is Valkey 8.1.
fn set_has_ifeq(has: &[&str]) -> bool {
    has.iter().any(|h| ["DELEX", "DELIFEQ", "IFEQ"].contains(h))
}

fn answer(args: &[Vec<u8>], has: &[&str], st: &mut State) -> Vec<u8> {
    let word = |i: usize| String::from_utf8_lossy(&args[i]).to_uppercase();
    let name = word(0);
    st.log.push(
        args.iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect::<Vec<_>>()
            .join(" "),
    );
    let optional = ["DELEX", "DELIFEQ"];
    if optional.contains(&name.as_str()) && !has.contains(&name.as_str()) {
        return format!("-ERR unknown command '{name}'\r\n").into_bytes();
    }
    match name.as_str() {
        "CLIENT" | "SELECT" => OK.to_vec(),
        // SET's arguments, as Valkey 8.1's COMMAND DOCS nests them, with IFEQ where the
        // fake has it.
        "COMMAND" if word(1) == "DOCS" => {
            let token = if set_has_ifeq(has) { "IFEQ" } else { "XX" };
            let arg = format!(
                "*4\r\n$4\r\nname\r\n$9\r\ncondition\r\n$5\r\ntoken\r\n${}\r\n{token}\r\n",
                token.len()
            );
            format!("*2\r\n$3\r\nset\r\n*2\r\n$9\r\narguments\r\n*1\r\n{arg}").into_bytes()
        }
        "COMMAND" => {
            let asked = &args[2..];
            let mut r = format!("*{}\r\n", asked.len()).into_bytes();
            for a in asked {
                let a = String::from_utf8_lossy(a).to_uppercase();
                if has.contains(&a.as_str()) {
                    r.extend_from_slice(b"*1\r\n");
                    r.extend(bulk(a.to_lowercase().as_bytes()));
                } else {
                    r.extend_from_slice(NIL);
                }
            }
            r
        }
        "GET" => st.data.get(&args[1]).map_or(NIL.to_vec(), |v| bulk(v)),
        "SET" => {
            let opts: Vec<String> = (3..args.len()).map(word).collect();
            let current = st.data.get(&args[1]);
            if opts.iter().any(|o| o == "NX") && current.is_some() {
                return NIL.to_vec();
            }
            if let Some(i) = opts.iter().position(|o| o == "IFEQ") {
                if !set_has_ifeq(has) {
                    return b"-ERR syntax error\r\n".to_vec();
                }
                if current != Some(&args[4 + i]) {
                    return NIL.to_vec();
                }
            }
            st.data.insert(args[1].clone(), args[2].clone());
            OK.to_vec()
        }
        "DEL" => int(st.data.remove(&args[1]).is_some() as i64),
        "EXISTS" => int(st.data.contains_key(&args[1]) as i64),
        "DELEX" | "DELIFEQ" => {
            let expected = args.last().expect("comparison value");
            let matches = st.data.get(&args[1]) == Some(expected);
            if matches {
                st.data.remove(&args[1]);
            }
            int(matches as i64)
        }
        "PUBLISH" => int(0),
        "PEXPIRE" => int(st.data.contains_key(&args[1]) as i64),
        "PTTL" => int(if st.data.contains_key(&args[1]) {
            -1
        } else {
            -2
        }),
        "SCRIPT" => {
            let body = String::from_utf8_lossy(&args[2]).into_owned();
            let sha = sha1_smol::Sha1::from(&body).digest().to_string();
            st.scripts.insert(sha.clone(), body);
            bulk(sha.as_bytes())
        }
        "EVALSHA" => {
            let sha = String::from_utf8_lossy(&args[1]).into_owned();
            let Some(body) = st.scripts.get(&sha).cloned() else {
                return b"-NOSCRIPT No matching script. Please use EVAL.\r\n".to_vec();
            };
            let nkeys: usize = String::from_utf8_lossy(&args[2]).parse().expect("numkeys");
            let keys = &args[3..3 + nkeys];
            let argv = &args[3 + nkeys..];
            run_script(body.lines().next().unwrap_or(""), keys, argv, st)
        }
        "EVAL" => {
            let body = String::from_utf8_lossy(&args[1]).into_owned();
            let nkeys: usize = String::from_utf8_lossy(&args[2]).parse().expect("numkeys");
            let keys = &args[3..3 + nkeys];
            let argv = &args[3 + nkeys..];
            run_script(body.lines().next().unwrap_or(""), keys, argv, st)
        }
        _ => format!("-ERR the fake does not know '{name}'\r\n").into_bytes(),
    }
}

/// ephpm's scripts, by name (see src/store/redis/scripts.rs for what each does).
fn run_script(first_line: &str, keys: &[Vec<u8>], argv: &[Vec<u8>], st: &mut State) -> Vec<u8> {
    match first_line {
        "-- ephpm:acquire" => {
            if st.data.contains_key(&keys[0]) {
                return int(0);
            }
            st.data.insert(keys[0].clone(), argv[0].clone());
            let fence = st
                .data
                .get(&keys[1])
                .map_or(0, |v| String::from_utf8_lossy(v).parse::<i64>().unwrap())
                + 1;
            st.data
                .insert(keys[1].clone(), fence.to_string().into_bytes());
            int(fence)
        }
        "-- ephpm:release" => {
            let matches = st.data.get(&keys[0]) == Some(&argv[0]);
            if matches {
                st.data.remove(&keys[0]);
            }
            int(matches as i64)
        }
        // No waiters ever queue on the fake: nobody to hand the lock to.
        "-- ephpm:hand_over" => int(0),
        "-- ephpm:extend" => int((st.data.get(&keys[0]) == Some(&argv[0])) as i64),
        other => format!("-ERR the fake cannot run the script '{other}'\r\n").into_bytes(),
    }
}
