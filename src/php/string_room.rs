//! A new PHP string as the room a get copies a value into (`store::Room`): the value is
//! copied once, out of the store straight into the string PHP is given, not into a
//! buffer first and out of it again. The string is allocated only once PHP's
//! memory_limit is known to have room for it (`no_room_for_string`), and never while a
//! store lock is held (the store asks for room only on its lock-free path), so an
//! allocation that ends the request holds up nobody.

use std::mem::MaybeUninit;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::ffi::{_emalloc, zend_string};
use ext_php_rs::types::ZendStr;

use super::ffi::{self, GC_STRING};
use crate::store::{Fetched, Room};

/// Where the last value asked for went.
pub enum Roomed {
    /// Into a new PHP string.
    String(ZBox<ZendStr>),
    /// Into the scratch buffer (a serialized value to unserialize), or nowhere (no string
    /// hit asked for room).
    Scratch,
    /// Nowhere: a string of `len` bytes, more than memory_limit leaves room for (`left`).
    TooLarge { len: usize, left: usize },
}

/// The room: a new PHP string for a string value (and for a serialized one when it is
/// to be returned as it is), the scratch buffer for a serialized value to unserialize.
pub struct StringRoom<'b> {
    scratch: &'b mut Vec<u8>,
    serialized_as_string: bool,
    last: Roomed,
}

impl<'b> StringRoom<'b> {
    pub fn new(scratch: &'b mut Vec<u8>, serialized_as_string: bool) -> Self {
        StringRoom {
            scratch,
            serialized_as_string,
            last: Roomed::Scratch,
        }
    }

    /// Where the value of the read went. Only for a string-like hit: a read may have
    /// asked for room on a try whose entry was then replaced by a number.
    pub fn take(self) -> Roomed {
        self.last
    }
}

impl Room for StringRoom<'_> {
    fn room(&mut self, len: usize, kind: Fetched) -> Option<&mut [MaybeUninit<u8>]> {
        // An earlier try's string (a writer moved the entry meanwhile) is freed here.
        self.last = Roomed::Scratch;
        if kind == Fetched::Serialized && !self.serialized_as_string {
            return self.scratch.room(len, kind);
        }
        if let Some(left) = no_room_for_string(len) {
            self.last = Roomed::TooLarge { len, left };
            return None;
        }
        let mut string = new_string(len);
        let val: *mut MaybeUninit<u8> = string.val.as_mut_ptr().cast();
        self.last = Roomed::String(string);
        // SAFETY: the string's buffer has `len` bytes before its NUL (new_string), owned
        // by `self.last` for as long as `self` is borrowed; the heap block does not move
        // when the ZBox does.
        Some(unsafe { std::slice::from_raw_parts_mut(val, len) })
    }

    unsafe fn filled(&mut self, len: usize) {
        if let Roomed::Scratch = self.last {
            // SAFETY: the last room was the scratch buffer's; the caller wrote its bytes.
            unsafe { self.scratch.filled(len) }
        }
    }
}

/// A PHP string of `len` bytes, uninitialised but for its NUL: `zend_string_alloc`
/// (Zend/zend_string.h, an inline function no library exports), not persistent.
fn new_string(len: usize) -> ZBox<ZendStr> {
    let size = std::mem::offset_of!(zend_string, val) + len + 1;
    // SAFETY: called inside a request (the PHP layer's functions), where the Zend heap
    // is live; `_emalloc` returns a block of `size` bytes or bails out, never null.
    // The header is written as zend_string_alloc writes it: refcount 1, a string that
    // is not collectable, no hash yet, the length; then the NUL after `len` bytes, inside
    // the block. ZBox frees it with zend_string_release when dropped.
    unsafe {
        let s = _emalloc(size).cast::<zend_string>();
        (*s).gc.refcount = 1;
        (*s).gc.u.type_info = GC_STRING;
        (*s).h = 0;
        (*s).len = len;
        *(*s).val.as_mut_ptr().add(len) = 0;
        ZBox::from_raw(s)
    }
}

/// Zend's allocator (Zend/zend_alloc.h): memory comes in pages of 4 KiB (a small string
/// rounds up to less, a large one to whole pages). A zend_string adds a 24-byte header
/// and a NUL.
const ZEND_MM_PAGE_SIZE: usize = 4096;
const ZSTR_OVERHEAD: usize = 24 + 1;

/// `Some(left)` when PHP's memory_limit certainly has no room for a new PHP string of
/// `len` bytes (`left` bytes remain): the caller refuses with an exception instead of
/// letting the allocation end the request with a fatal error. The allocator compares the
/// limit with its *real* size (whole chunks and huge blocks, `zend_memory_usage(true)`),
/// which is never below the bytes in use, so this never refuses what would fit.
pub fn no_room_for_string(len: usize) -> Option<usize> {
    // Read straight from PHP's core globals: ext-php-rs's `ProcessGlobals::get()` takes a
    // process-wide RwLock on every call, which cost a quarter of a cached get (measured
    // with perf). Only this thread writes memory_limit (ini_set), and not while we read.
    // SAFETY: the function returns PHP's (this thread's, under ZTS) core globals, valid
    // for the whole request.
    let limit = unsafe { (*ext_php_rs::ffi::ext_php_rs_process_globals()).memory_limit };
    // -1 (no limit) or an unset limit: the allocator grants anything.
    let limit = usize::try_from(limit).ok()?;
    // SAFETY: reads the current heap's counters; called inside a request.
    let used = unsafe { ffi::zend_memory_usage(true) };
    let left = limit.saturating_sub(used);
    let block = len
        .saturating_add(ZSTR_OVERHEAD)
        .next_multiple_of(ZEND_MM_PAGE_SIZE);
    (block > left).then_some(left)
}
