//! TLS for the test servers: a CA made for the test (`openssl`), a certificate for
//! 127.0.0.1 that every server presents (and, for its cluster bus and replication
//! links, uses as its client certificate), and a client certificate for the store.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The files of a test CA, in one directory: ca.crt, server.crt/.key, client.crt/.key.
#[derive(Clone)]
pub struct Certs {
    pub dir: PathBuf,
}

impl Certs {
    /// Makes the CA and the two certificates it signs in `dir`.
    pub fn make(dir: &Path) -> Certs {
        let openssl = |args: &[&str]| {
            let ok = Command::new("openssl")
                .args(args)
                .current_dir(dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("openssl")
                .success();
            assert!(ok, "openssl {args:?}");
        };
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-days",
            "2",
            "-subj",
            "/CN=ephpm test CA",
        ]);
        std::fs::write(dir.join("san.ext"), "subjectAltName=IP:127.0.0.1\n").expect("san.ext");
        for (name, subject) in [
            ("server", "/CN=127.0.0.1"),
            ("client", "/CN=ephpm test client"),
        ] {
            let (key, csr, crt) = (
                format!("{name}.key"),
                format!("{name}.csr"),
                format!("{name}.crt"),
            );
            openssl(&[
                "req", "-newkey", "rsa:2048", "-nodes", "-keyout", &key, "-out", &csr, "-subj",
                subject,
            ]);
            openssl(&[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                &crt,
                "-days",
                "2",
                "-extfile",
                "san.ext",
            ]);
        }
        Certs {
            dir: dir.to_path_buf(),
        }
    }

    pub fn ca(&self) -> PathBuf {
        self.dir.join("ca.crt")
    }

    fn file(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// redis-server's (and redis-sentinel's) arguments to listen with TLS on `port`
    /// only, asking clients for a certificate when `clients`, and speaking TLS on the
    /// cluster bus and to its master.
    pub fn server_args(&self, port: u16, clients: bool) -> Vec<String> {
        [
            "--port",
            "0",
            "--tls-port",
            &port.to_string(),
            "--tls-cert-file",
            &self.file("server.crt"),
            "--tls-key-file",
            &self.file("server.key"),
            "--tls-ca-cert-file",
            &self.file("ca.crt"),
            "--tls-auth-clients",
            if clients { "yes" } else { "no" },
            "--tls-replication",
            "yes",
            "--tls-cluster",
            "yes",
        ]
        .map(String::from)
        .to_vec()
    }

    /// The same as lines of a configuration file (redis-sentinel's).
    pub fn conf_lines(&self, port: u16) -> String {
        self.server_args(port, true)
            .chunks(2)
            .map(|kv| format!("{} {}\n", kv[0].trim_start_matches('-'), kv[1]))
            .filter(|l| !l.starts_with("tls-cluster"))
            .collect()
    }

    /// A DSN's query: the CA and the client certificate.
    pub fn query(&self) -> String {
        format!(
            "ca={}&cert={}&key={}",
            self.file("ca.crt"),
            self.file("client.crt"),
            self.file("client.key")
        )
    }

    /// redis-cli's arguments to reach a server.
    pub fn cli_args(&self) -> Vec<String> {
        vec![
            "--tls".into(),
            "--cacert".into(),
            self.file("ca.crt"),
            "--cert".into(),
            self.file("client.crt"),
            "--key".into(),
            self.file("client.key"),
        ]
    }

    /// A client of the server on `port`, with the client certificate.
    pub fn client(&self, port: u16) -> Option<redis::Client> {
        let read = |f: &str| std::fs::read(self.dir.join(f)).ok();
        redis::Client::build_with_tls(
            format!("rediss://127.0.0.1:{port}"),
            redis::TlsCertificates {
                client_tls: Some(redis::ClientTlsConfig {
                    client_cert: read("client.crt")?,
                    client_key: read("client.key")?,
                }),
                root_cert: Some(read("ca.crt")?),
            },
        )
        .ok()
    }
}

/// A command to the server on `port` (with TLS when `tls`), or None while it does not
/// answer.
pub fn ask_at(tls: Option<&Certs>, port: u16, cmd: &redis::Cmd) -> Option<redis::Value> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = match tls {
        Some(certs) => certs.client(port)?,
        None => redis::Client::open(format!("redis://127.0.0.1:{port}")).ok()?,
    };
    let mut con = client
        .get_connection_with_timeout(Duration::from_secs(1))
        .ok()?;
    cmd.query(&mut con).ok()
}
