//! One connection as the store uses it: to a single server, or to a Redis Cluster, where
//! the redis crate sends each command to the master of its key's hash slot (following
//! MOVED and ASK). Commands, scripts and same-key pipelines run on either unchanged;
//! what spans keys of several slots or every master goes through the few methods here.
//!
//! Scripts: the redis crate answers a NOSCRIPT by `SCRIPT LOAD`, which on a cluster it
//! sends to every master and which then fails while any master is down — so one dead
//! master would stop every script not yet loaded on the others. A cluster link sends
//! that `SCRIPT LOAD` to the master of the key of the script call that asked for it
//! instead: the node that will run the script.

use redis::cluster::ClusterConnection;
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, Slot, SlotAddr};
use redis::{Arg, Cmd, ConnectionLike, RedisResult, Value};

use super::node::Node;

pub enum Link {
    Server(redis::Connection),
    /// The connection (boxed: it is several times a server's), and the first key of the
    /// last script call (EVALSHA) sent on it.
    Cluster(Box<ClusterConnection<Node>>, Option<Vec<u8>>),
}

impl Link {
    /// Runs `cmds` (each on one key, or on keys of one slot) in one pipeline: on a
    /// cluster, one pipeline per hash slot, each to its slot's master (the crate's
    /// cluster pipeline runs on its own connection type only, not on `node.rs`'s). Not a
    /// transaction either way.
    pub fn pipeline<T: redis::FromRedisValue>(&mut self, cmds: Vec<Cmd>) -> RedisResult<T> {
        match self {
            Link::Server(con) => {
                let mut pipe = redis::pipe();
                for cmd in cmds {
                    pipe.add_command(cmd);
                }
                pipe.query(con)
            }
            Link::Cluster(con, _) => {
                // (slot, the commands' places in `cmds`, their pipeline), in first-seen order.
                let mut groups: Vec<(Slot, Vec<usize>, redis::Pipeline)> = Vec::new();
                for (i, cmd) in cmds.into_iter().enumerate() {
                    let key = match cmd.args_iter().nth(1) {
                        Some(Arg::Simple(key)) => key,
                        _ => b"",
                    };
                    let slot = Slot::for_key(key);
                    let at = match groups.iter().position(|(s, ..)| *s == slot) {
                        Some(at) => at,
                        None => {
                            groups.push((slot, Vec::new(), redis::pipe()));
                            groups.len() - 1
                        }
                    };
                    groups[at].1.push(i);
                    groups[at].2.add_command(cmd);
                }
                let mut replies = vec![Value::Nil; groups.iter().map(|g| g.1.len()).sum()];
                for (_, places, pipe) in &groups {
                    // The cluster connection routes a pipeline by its first key.
                    let got =
                        con.req_packed_commands(&pipe.get_packed_pipeline(), 0, pipe.len())?;
                    for (place, reply) in places.iter().zip(got) {
                        replies[*place] = reply;
                    }
                }
                redis::from_redis_value(Value::Array(replies)).map_err(Into::into)
            }
        }
    }

    /// The masters (`host`, `port`) that serve the keyspace now, in slot order; one
    /// entry, `None`, for a single server.
    pub fn masters(&mut self) -> RedisResult<Vec<Option<(String, u16)>>> {
        let Link::Cluster(..) = self else {
            return Ok(vec![None]);
        };
        // CLUSTER SLOTS: [[start, end, [host, port, id…], replicas…], …].
        let ranges: Vec<Value> = redis::cmd("CLUSTER").arg("SLOTS").query(self)?;
        let mut by_slot: Vec<(i64, String, u16)> = Vec::new();
        for range in ranges {
            let Value::Array(range) = range else { continue };
            let (Some(Value::Int(start)), Some(Value::Array(master))) =
                (range.first(), range.get(2))
            else {
                continue;
            };
            let (Some(Value::BulkString(host)), Some(Value::Int(port))) =
                (master.first(), master.get(1))
            else {
                continue;
            };
            by_slot.push((*start, String::from_utf8_lossy(host).into(), *port as u16));
        }
        by_slot.sort();
        let mut masters: Vec<Option<(String, u16)>> = Vec::new();
        for (_, host, port) in by_slot {
            let m = Some((host, port));
            if !masters.contains(&m) {
                masters.push(m);
            }
        }
        Ok(masters)
    }

    /// Runs `cmd` on one master of `masters()` (on the server itself for `None`).
    pub fn on_master<T: redis::FromRedisValue>(
        &mut self,
        master: &Option<(String, u16)>,
        cmd: &Cmd,
    ) -> RedisResult<T> {
        match (self, master) {
            (Link::Cluster(con, _), Some((host, port))) => {
                let routing = SingleNodeRoutingInfo::ByAddress {
                    host: host.clone(),
                    port: *port,
                };
                let reply = con.route_command(cmd, RoutingInfo::SingleNode(routing))?;
                Ok(redis::from_redis_value(reply)?)
            }
            (link, _) => cmd.query(link),
        }
    }
}

/// Every command goes to the connection underneath.
impl ConnectionLike for Link {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        match self {
            Link::Server(c) => c.req_packed_command(cmd),
            Link::Cluster(c, _) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        match self {
            Link::Server(c) => c.req_packed_commands(cmd, offset, count),
            Link::Cluster(c, _) => c.req_packed_commands(cmd, offset, count),
        }
    }

    fn req_command(&mut self, cmd: &Cmd) -> RedisResult<Value> {
        let (con, script_key) = match self {
            Link::Server(c) => return c.req_command(cmd),
            Link::Cluster(c, key) => (c, key),
        };
        let mut args = cmd.args_iter().map(|a| match a {
            Arg::Simple(bytes) => bytes,
            _ => b"",
        });
        match (args.next(), args.next(), args.next(), args.next()) {
            (Some(name), _, Some(keys), Some(key))
                if name.eq_ignore_ascii_case(b"EVALSHA") && keys != b"0" =>
            {
                *script_key = Some(key.to_vec());
            }
            (Some(name), Some(sub), _, _)
                if name.eq_ignore_ascii_case(b"SCRIPT") && sub.eq_ignore_ascii_case(b"LOAD") =>
            {
                if let Some(key) = script_key {
                    let node = SingleNodeRoutingInfo::SpecificNode(Route::with_key(
                        key.as_slice(),
                        SlotAddr::Master,
                    ));
                    return con.route_command(cmd, RoutingInfo::SingleNode(node));
                }
            }
            _ => {}
        }
        con.req_command(cmd)
    }

    fn get_db(&self) -> i64 {
        match self {
            Link::Server(c) => c.get_db(),
            Link::Cluster(c, _) => c.get_db(),
        }
    }

    /// On a cluster, a pipeline whose commands share one slot: the cluster connection
    /// sends it to the master of its first key.
    fn supports_pipelining(&self) -> bool {
        match self {
            Link::Server(c) => c.supports_pipelining(),
            Link::Cluster(..) => true,
        }
    }

    fn check_connection(&mut self) -> bool {
        match self {
            Link::Server(c) => c.check_connection(),
            Link::Cluster(c, _) => c.check_connection(),
        }
    }

    fn is_open(&self) -> bool {
        match self {
            Link::Server(c) => c.is_open(),
            Link::Cluster(c, _) => c.is_open(),
        }
    }
}
