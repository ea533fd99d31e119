//! Declarations of the PHP C API functions ext-php-rs does not bind: PHP's own argument
//! parsing and error helpers (so bad arguments get PHP's exact wording), the serializer,
//! and `display_ini_entries` for phpinfo. All are exported by the PHP binary (ZEND_API /
//! PHPAPI); ZEND_FASTCALL is the plain C convention on x86-64. They are functions, not
//! data, so a lazily bound dlopen (cargo-php) does not need them resolved.

use std::ffi::{c_char, c_int, c_void};

use ext_php_rs::ffi::{zend_module_entry, zend_string, zval};

/// PHP's `smart_str`.
#[repr(C)]
pub struct SmartStr {
    pub s: *mut zend_string,
    pub a: usize,
}

/// `GC_STRING` (Zend/zend_types.h): a string's type info, `IS_STRING` (6) with the
/// `GC_NOT_COLLECTABLE` flag (1 << 4, at `GC_FLAGS_SHIFT` 0).
pub const GC_STRING: u32 = 6 | (1 << 4);

/// `zend_result`.
pub const SUCCESS: c_int = 0;
pub const FAILURE: c_int = -1;

/// ext/session's `ps_module` (php_session.h, PS_MOD_UPDATE_TIMESTAMP layout).
#[repr(C)]
pub struct PsModule {
    pub s_name: *const c_char,
    pub s_open: unsafe extern "C" fn(*mut *mut c_void, *const c_char, *const c_char) -> c_int,
    pub s_close: unsafe extern "C" fn(*mut *mut c_void) -> c_int,
    pub s_read: unsafe extern "C" fn(
        *mut *mut c_void,
        *mut zend_string,
        *mut *mut zend_string,
        i64,
    ) -> c_int,
    pub s_write:
        unsafe extern "C" fn(*mut *mut c_void, *mut zend_string, *mut zend_string, i64) -> c_int,
    pub s_destroy: unsafe extern "C" fn(*mut *mut c_void, *mut zend_string) -> c_int,
    pub s_gc: unsafe extern "C" fn(*mut *mut c_void, i64, *mut i64) -> i64,
    pub s_create_sid: unsafe extern "C" fn(*mut *mut c_void) -> *mut zend_string,
    pub s_validate_sid: unsafe extern "C" fn(*mut *mut c_void, *mut zend_string) -> c_int,
    pub s_update_timestamp:
        unsafe extern "C" fn(*mut *mut c_void, *mut zend_string, *mut zend_string, i64) -> c_int,
}

/// `zend_expected_type` values (Zend/zend_API.h, Z_EXPECTED_TYPES, in order).
pub const Z_EXPECTED_LONG: c_int = 0;
pub const Z_EXPECTED_STRING: c_int = 4;
pub const Z_EXPECTED_STRING_OR_NULL: c_int = 5;
pub const Z_EXPECTED_ARRAY: c_int = 6;
pub const Z_EXPECTED_NUMBER: c_int = 22;

unsafe extern "C" {
    pub fn zend_parse_arg_str_slow(
        arg: *mut zval,
        dest: *mut *mut zend_string,
        arg_num: u32,
    ) -> bool;
    pub fn zend_parse_arg_long_slow(arg: *mut zval, dest: *mut i64, arg_num: u32) -> bool;
    pub fn zend_parse_arg_number_slow(arg: *mut zval, dest: *mut *mut zval, arg_num: u32) -> bool;
    pub fn zend_wrong_parameter_type_error(num: u32, expected: c_int, arg: *mut zval);
    pub fn zend_wrong_parameters_count_error(min: u32, max: u32);
    pub fn zend_argument_value_error(arg_num: u32, format: *const c_char, ...);
    pub fn zend_argument_type_error(arg_num: u32, format: *const c_char, ...);

    pub fn php_var_serialize_init() -> *mut c_void;
    pub fn php_var_serialize(buf: *mut SmartStr, value: *mut zval, data: *mut *mut c_void);
    pub fn php_var_serialize_destroy(data: *mut c_void);
    pub fn php_var_unserialize_init() -> *mut c_void;
    pub fn php_var_unserialize(
        rval: *mut zval,
        p: *mut *const u8,
        max: *const u8,
        var_hash: *mut *mut c_void,
    ) -> c_int;
    pub fn php_var_unserialize_destroy(data: *mut c_void);

    pub fn display_ini_entries(module: *mut zend_module_entry);

    pub fn zend_ini_long(name: *const c_char, name_length: usize, orig: c_int) -> i64;
    pub fn zend_ini_double(name: *const c_char, name_length: usize, orig: c_int) -> f64;
    pub fn zend_ini_string(name: *const c_char, name_length: usize, orig: c_int) -> *mut c_char;

    pub fn php_session_register_module(module: *const PsModule) -> c_int;
    pub fn php_session_create_id(mod_data: *mut *mut c_void) -> *mut zend_string;
    pub fn sapi_get_request_time() -> f64;
    pub fn zend_memory_usage(real_usage: bool) -> usize;
    pub fn zend_zval_type_name(arg: *const zval) -> *const c_char;
}
