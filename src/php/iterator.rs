//! `Ephpm\KvIterator`: a Kv's keys, in the spirit of APCUIterator — walked a bounded
//! batch at a time (`Store::scan`: no shard lock held longer than one shard's walk), each
//! key with its TTL, size and, for a held lock, its fencing number.

use std::collections::VecDeque;

use ext_php_rs::args::Arg;
use ext_php_rs::builders::FunctionBuilder;
use ext_php_rs::class::{ClassEntryInfo, ConstructorMeta, ConstructorResult};
use ext_php_rs::flags::{ClassFlags, DataType, MethodFlags};
use ext_php_rs::types::{ZendHashTable, ZendStr, Zval};
use ext_php_rs::zend::{ClassEntry, ExecuteData};

use super::call::{Call, run};
use super::class::{builtin_class, native_class, public};
use super::error::throw;
use super::kv::keyspace_arg;
use crate::keyspace::Keyspace;
use crate::store::{KeyTtl, ScanEntry};

pub struct KvIterator {
    space: Keyspace,
    prefix: Vec<u8>,
    /// Where the store's walk goes on; None once it is done.
    cursor: Option<u64>,
    batch: VecDeque<ScanEntry>,
}

fn iterator_interface() -> &'static ClassEntry {
    // The engine's own interface, registered before any extension loads.
    #[allow(clippy::expect_used)]
    builtin_class(c"zend_ce_iterator").expect("Zend registers Iterator")
}

const IMPLEMENTS: &[ClassEntryInfo] = &[(iterator_interface, "\\Iterator")];

native_class!(
    KvIterator,
    "Ephpm\\KvIterator",
    ClassFlags::Final,
    &[],
    methods,
    Some(ConstructorMeta {
        constructor: construct,
        build_fn: constructor_args,
        flags: None
    }),
    implements = IMPLEMENTS
);

/// `__construct(?Ephpm\Kv $store = null, string $prefix = '')`.
fn construct(ex: &mut ExecuteData) -> ConstructorResult<KvIterator> {
    let Some(c) = Call::new(ex, 0, 2) else {
        return ConstructorResult::ArgError;
    };
    let Some(space) = keyspace_arg(&c, 0, "Ephpm\\KvIterator::__construct()") else {
        return ConstructorResult::ArgError;
    };
    let prefix = if c.arg(1).is_some() {
        match c.string(1) {
            Some(p) => p.to_vec(),
            None => return ConstructorResult::ArgError,
        }
    } else {
        Vec::new()
    };
    ConstructorResult::Ok(KvIterator {
        space,
        prefix,
        cursor: Some(0),
        batch: VecDeque::new(),
    })
}

fn constructor_args(f: FunctionBuilder) -> FunctionBuilder {
    f.arg(super::class::nullable(
        "store",
        DataType::object("Ephpm\\Kv"),
    ))
    .arg(Arg::new("prefix", DataType::String).default("''"))
    .required_args(0)
}

impl KvIterator {
    /// Fetches batches until one holds a key or the walk is done; false with the
    /// exception thrown when the store fails.
    fn fill(&mut self, what: &str) -> bool {
        while self.batch.is_empty() {
            let Some(cursor) = self.cursor else {
                return true;
            };
            let mut found = Vec::new();
            match self.space.scan(&self.prefix, cursor, &mut found) {
                Ok(next) => {
                    self.cursor = (next != 0).then_some(next);
                    self.batch.extend(found);
                }
                Err(e) => {
                    throw(&e, 0, what);
                    return false;
                }
            }
        }
        true
    }
}

fn this(ex: &mut ExecuteData) -> Option<&mut KvIterator> {
    Call::new(ex, 0, 0)?.this::<KvIterator>()
}

/// `rewind(): void` — starts the walk again from the store's first key.
extern "C" fn rewind(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(it) = this(ex) else { return };
        it.cursor = Some(0);
        it.batch.clear();
        if it.fill("Ephpm\\KvIterator::rewind()") {
            rv.set_null();
        }
    })
}

/// `valid(): bool`.
extern "C" fn valid(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(it) = this(ex) else { return };
        if it.fill("Ephpm\\KvIterator::valid()") {
            rv.set_bool(!it.batch.is_empty());
        }
    })
}

/// `key(): ?string` — the key (without the Kv's prefix).
extern "C" fn key(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(it) = this(ex) else { return };
        match it.batch.front() {
            Some(e) => rv.set_zend_string(ZendStr::new(&e.key, false)),
            None => rv.set_null(),
        }
    })
}

/// `current(): ?array` — `['ttl' => float|null (seconds; null: none), 'size' => int,
/// 'fence' => int|null (a held lock's fencing number)]`.
extern "C" fn current(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(it) = this(ex) else { return };
        let Some(e) = it.batch.front() else {
            rv.set_null();
            return;
        };
        let mut a = ZendHashTable::new();
        let ttl = match e.ttl {
            KeyTtl::Remaining(d) => Some(d.as_secs_f64()),
            _ => None,
        };
        let _ = a.insert("ttl", ttl);
        let _ = a.insert("size", i64::try_from(e.size).unwrap_or(i64::MAX));
        let _ = a.insert(
            "fence",
            e.fence.map(|f| i64::try_from(f).unwrap_or(i64::MAX)),
        );
        rv.set_hashtable(a);
    })
}

/// `next(): void`.
extern "C" fn next(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(it) = this(ex) else { return };
        it.batch.pop_front();
        rv.set_null();
    })
}

fn methods() -> Vec<(FunctionBuilder<'static>, MethodFlags)> {
    use DataType::{Array, Bool, String, Void};
    public(vec![
        FunctionBuilder::new("rewind", rewind).returns(Void, false, false),
        FunctionBuilder::new("valid", valid).returns(Bool, false, false),
        FunctionBuilder::new("key", key).returns(String, false, true),
        FunctionBuilder::new("current", current).returns(Array, false, true),
        FunctionBuilder::new("next", next).returns(Void, false, false),
    ])
}
