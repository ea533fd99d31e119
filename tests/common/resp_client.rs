//! A small blocking RESP2 client and an `ephpm-resp` started for one test, stopped when
//! the test ends.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::TestDir;

#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Reply>>),
}

impl Reply {
    pub fn bulk(s: &str) -> Reply {
        Reply::Bulk(Some(s.as_bytes().to_vec()))
    }

    pub fn ok() -> Reply {
        Reply::Simple("OK".into())
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_))
    }
}

/// One connection: a unix socket or TCP, read through a buffer.
pub struct Client {
    reader: BufReader<Box<dyn ReadWrite>>,
}

pub trait ReadWrite: Read + Write + Send {
    fn writer(&mut self) -> &mut dyn Write;
}

impl<T: Read + Write + Send> ReadWrite for T {
    fn writer(&mut self) -> &mut dyn Write {
        self
    }
}

impl Client {
    pub fn unix(path: &std::path::Path) -> Client {
        let s = UnixStream::connect(path).expect("connect to the server's socket");
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        Client {
            reader: BufReader::new(Box::new(s)),
        }
    }

    pub fn tcp(addr: &str) -> Client {
        let s = std::net::TcpStream::connect(addr).expect("connect over TCP");
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        Client {
            reader: BufReader::new(Box::new(s)),
        }
    }

    /// Sends raw bytes.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.reader
            .get_mut()
            .writer()
            .write_all(bytes)
            .expect("send");
    }

    /// Sends one command as a RESP array of bulk strings.
    pub fn send(&mut self, args: &[&[u8]]) {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.send_raw(&out);
    }

    /// Sends a command and reads its reply.
    pub fn call(&mut self, args: &[&str]) -> Reply {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.send(&args);
        self.read().expect("a reply")
    }

    /// Reads one reply; `None` when the server closed the connection.
    pub fn read(&mut self) -> Option<Reply> {
        let mut line = Vec::new();
        if self.reader.read_until(b'\n', &mut line).ok()? == 0 {
            return None;
        }
        let text = String::from_utf8_lossy(&line[1..line.len() - 2]).into_owned();
        Some(match line[0] {
            b'+' => Reply::Simple(text),
            b'-' => Reply::Error(text),
            b':' => Reply::Int(text.parse().expect("an integer")),
            b'$' => {
                let n: i64 = text.parse().expect("a length");
                if n < 0 {
                    Reply::Bulk(None)
                } else {
                    let mut b = vec![0; n as usize + 2];
                    self.reader.read_exact(&mut b).ok()?;
                    b.truncate(n as usize);
                    Reply::Bulk(Some(b))
                }
            }
            b'*' => {
                let n: i64 = text.parse().expect("a count");
                if n < 0 {
                    Reply::Array(None)
                } else {
                    Reply::Array(Some((0..n).map(|_| self.read()).collect::<Option<_>>()?))
                }
            }
            other => panic!("unexpected reply type {:?}", other as char),
        })
    }
}

/// An `ephpm-resp` serving the store "t" in its own directory.
pub struct Server {
    pub dir: TestDir,
    pub socket: PathBuf,
    /// "127.0.0.1:PORT" when started with TCP.
    pub tcp: Option<String>,
    child: Child,
    /// Kept open, so that what the server writes later has a reader.
    _stderr: BufReader<std::process::ChildStderr>,
}

impl Server {
    /// Starts the server with `extra` arguments; returns once it listens.
    pub fn start(extra: &[&str]) -> Server {
        let dir = TestDir::new("resp");
        let mut child = Command::new(env!("CARGO_BIN_EXE_ephpm-resp"))
            .args(["--store", "t", "--shm-size", "16M", "--shm-dir"])
            .arg(&dir.0)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start ephpm-resp");
        // Its first line says where it listens.
        let mut line = String::new();
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        stderr
            .read_line(&mut line)
            .expect("the server's first line");
        assert!(line.contains("serving"), "ephpm-resp did not start: {line}");
        let tcp = line.split("tcp:").nth(1).map(|rest| {
            rest.split([',', '\n'])
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        });
        let socket = dir
            .0
            .join(format!("ephpm-{}", ephpm::store::shm::euid()))
            .join("t.resp.sock");
        Server {
            dir,
            socket,
            tcp,
            child,
            _stderr: stderr,
        }
    }

    pub fn client(&self) -> Client {
        Client::unix(&self.socket)
    }

    /// The store the server serves, opened as a PHP process opens it.
    pub fn store(&self) -> ephpm::store::shm::ShmStore {
        let opts = ephpm::store::shm::ShmOptions {
            dir: self.dir.0.clone(),
            ..ephpm::store::shm::ShmOptions::new("t", 16 << 20)
        };
        ephpm::store::shm::ShmStore::open(&opts)
            .expect("open the served store")
            .0
    }

    pub fn alive(&mut self) -> bool {
        self.child.try_wait().expect("wait").is_none()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
