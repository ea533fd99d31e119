//! The registration of ephpm's native classes with ext-php-rs, by hand rather than by
//! `#[php_class]`: each class parses its own arguments (PHP's exact wording for bad ones)
//! and declares its argument info exactly, which the macros do not allow.

/// Implements `RegisteredClass` for a class whose methods are raw handlers.
///
/// `native_class!(Type, "Php\\Name", flags, properties, methods_fn, constructor)`:
/// `properties` is a `&'static [PropertyDescriptor<Type>]` of read-only getters,
/// `methods_fn` returns the method builders with their flags (see `public`), `constructor` is an
/// `Option<ConstructorMeta<Type>>` (None: the class cannot be constructed from PHP);
/// an optional last `implements = &[ClassEntryInfo]` lists the interfaces it implements.
macro_rules! native_class {
    ($ty:ty, $name:literal, $flags:expr, $props:expr, $methods:path, $ctor:expr) => {
        native_class!(
            $ty,
            $name,
            $flags,
            $props,
            $methods,
            $ctor,
            implements = &[]
        );
    };
    ($ty:ty, $name:literal, $flags:expr, $props:expr, $methods:path, $ctor:expr, implements = $impls:expr) => {
        impl ::ext_php_rs::class::RegisteredClass for $ty {
            const CLASS_NAME: &'static str = $name;
            const BUILDER_MODIFIER: Option<
                fn(::ext_php_rs::builders::ClassBuilder) -> ::ext_php_rs::builders::ClassBuilder,
            > = None;
            const EXTENDS: Option<::ext_php_rs::class::ClassEntryInfo> = None;
            const IMPLEMENTS: &'static [::ext_php_rs::class::ClassEntryInfo] = $impls;
            const FLAGS: ::ext_php_rs::flags::ClassFlags = $flags;

            fn get_metadata() -> &'static ::ext_php_rs::class::ClassMetadata<Self> {
                static META: ::ext_php_rs::class::ClassMetadata<$ty> =
                    ::ext_php_rs::class::ClassMetadata::new($props);
                &META
            }

            fn method_builders() -> Vec<(
                ::ext_php_rs::builders::FunctionBuilder<'static>,
                ::ext_php_rs::flags::MethodFlags,
            )> {
                $methods()
            }

            fn constructor() -> Option<::ext_php_rs::class::ConstructorMeta<Self>> {
                $ctor
            }

            fn constants() -> &'static [(
                &'static str,
                &'static dyn ::ext_php_rs::convert::IntoZvalDyn,
                ::ext_php_rs::describe::DocComments,
                ::ext_php_rs::flags::ConstantFlags,
            )] {
                &[]
            }
        }
    };
}

pub(crate) use native_class;

/// Marks method builders public.
pub fn public(
    methods: Vec<ext_php_rs::builders::FunctionBuilder<'static>>,
) -> Vec<(
    ext_php_rs::builders::FunctionBuilder<'static>,
    ext_php_rs::flags::MethodFlags,
)> {
    methods
        .into_iter()
        .map(|m| (m, ext_php_rs::flags::MethodFlags::Public))
        .collect()
}

/// The class entry a built-in extension publishes in the variable `symbol` (such as
/// SPL's `spl_ce_RuntimeException`), found by symbol: `ClassEntry::try_find` does not
/// work during MINIT (research/ext-php-rs.md, pitfall 1).
pub fn builtin_class(symbol: &std::ffi::CStr) -> Option<&'static ext_php_rs::zend::ClassEntry> {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name; the result, if not null,
    // is the address of a `zend_class_entry *` variable, set during that extension's
    // MINIT, which runs before any loaded extension's (built-in modules start first).
    let ce = unsafe {
        let sym = libc::dlsym(libc::RTLD_DEFAULT, symbol.as_ptr());
        (!sym.is_null())
            .then(|| *sym.cast::<*mut ext_php_rs::zend::ClassEntry>())
            .filter(|p| !p.is_null())
    };
    // SAFETY: a registered class entry lives as long as the process.
    ce.map(|p| unsafe { &*p })
}

/// An optional argument that may be null and defaults to null (`?T $name = null`).
pub fn nullable(name: &str, ty: ext_php_rs::flags::DataType) -> ext_php_rs::args::Arg<'_> {
    ext_php_rs::args::Arg::new(name, ty)
        .allow_null()
        .default("null")
}
