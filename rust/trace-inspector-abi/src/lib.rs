//! The trace-inspector engine ABI (`engine/include/trace_abi.h`, version 1) for Rust engines.
//!
//! Implement [`Engine`] for your model and export the `ti_` symbols from a `cdylib` with
//! [`export_engine!`]:
//!
//! ```ignore
//! use trace_inspector_abi::{export_engine, Catalogue, DType, Dim, Engine, Pass, Result};
//!
//! struct Doubler;
//! impl Engine for Doubler {
//!     fn catalogue() -> Catalogue {
//!         let mut c = Catalogue::new("doubler", "1.0.0", "dev");
//!         c.input("x", DType::F32, &[Dim::sym("N")], true, "input vector");
//!         c.boundary("toy.y", DType::F32, &[Dim::sym("N")], "2x");
//!         c
//!     }
//!     fn open(_config: &str, _weights: Option<&str>) -> Result<Self> { Ok(Doubler) }
//!     fn pass(&mut self, pass: &mut Pass<'_>) -> Result<()> {
//!         let x = pass.input::<f32>("x")?;
//!         let y: Vec<f32> = x.data.iter().map(|v| 2.0 * v).collect();
//!         pass.emit("toy.y", &y, &[y.len() as i64])
//!     }
//! }
//! export_engine!(Doubler);
//! ```
//!
//! The crate does the ABI once: the `ti_describe` JSON from the catalogue, inputs copied after
//! their dtype, rank and extents are checked (a shape symbol such as `"N"` is bound by the first
//! input that uses it), typed options, the record callback and the wanted filter, injection with
//! the checks docs/implementing-the-abi.md asks for (cleared when a pass ends), error messages for
//! `ti_last_error` and `ti_open`'s buffer, and status strings. Every call into engine code runs
//! under `catch_unwind`: a panic becomes `TI_ERR_INTERNAL` with its message, never an unwind
//! across the FFI boundary, and the session refuses further passes. No dependencies.

pub mod ffi;
pub mod json;
pub mod safetensors;

use std::collections::HashMap;
use std::ffi::{c_void, CString};

pub use ffi::RecordFn;

/// `ti_status`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ok = 0,
    InvalidArgument = 1,
    Io = 2,
    Format = 3,
    State = 4,
    UnknownName = 5,
    Shape = 6,
    OutOfMemory = 7,
    Aborted = 8,
    Internal = 9,
}

impl Status {
    /// The name `ti_status_string` returns ("TI_ERR_SHAPE", ...).
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "TI_OK",
            Status::InvalidArgument => "TI_ERR_INVALID_ARGUMENT",
            Status::Io => "TI_ERR_IO",
            Status::Format => "TI_ERR_FORMAT",
            Status::State => "TI_ERR_STATE",
            Status::UnknownName => "TI_ERR_UNKNOWN_NAME",
            Status::Shape => "TI_ERR_SHAPE",
            Status::OutOfMemory => "TI_ERR_OUT_OF_MEMORY",
            Status::Aborted => "TI_ERR_ABORTED",
            Status::Internal => "TI_ERR_INTERNAL",
        }
    }
}

/// `ti_dtype`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    F32 = 0,
    F16 = 1,
    BF16 = 2,
    F64 = 3,
    I8 = 4,
    I16 = 5,
    I32 = 6,
    I64 = 7,
    U8 = 8,
    U16 = 9,
    U32 = 10,
    U64 = 11,
    Bool = 12,
    C64 = 13,
}

const DTYPES: [DType; 14] = [
    DType::F32, DType::F16, DType::BF16, DType::F64, DType::I8, DType::I16, DType::I32,
    DType::I64, DType::U8, DType::U16, DType::U32, DType::U64, DType::Bool, DType::C64,
];

impl DType {
    pub fn from_u32(value: u32) -> Option<DType> {
        DTYPES.get(value as usize).copied()
    }
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 | DType::Bool => 1,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 | DType::C64 => 8,
        }
    }
    /// The catalogue's spelling ("f32").
    pub fn name(self) -> &'static str {
        ["f32", "f16", "bf16", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool", "c64"][self as usize]
    }
}

/// Element types a record or an input can be viewed as (every bit pattern is a valid value).
///
/// # Safety
/// Implemented only for plain numeric types of exactly `DTYPE.size()` bytes.
pub unsafe trait Element: Copy + 'static {
    const DTYPE: DType;
}
unsafe impl Element for f32 { const DTYPE: DType = DType::F32; }
unsafe impl Element for f64 { const DTYPE: DType = DType::F64; }
unsafe impl Element for i8 { const DTYPE: DType = DType::I8; }
unsafe impl Element for i16 { const DTYPE: DType = DType::I16; }
unsafe impl Element for i32 { const DTYPE: DType = DType::I32; }
unsafe impl Element for i64 { const DTYPE: DType = DType::I64; }
unsafe impl Element for u8 { const DTYPE: DType = DType::U8; }
unsafe impl Element for u16 { const DTYPE: DType = DType::U16; }
unsafe impl Element for u32 { const DTYPE: DType = DType::U32; }
unsafe impl Element for u64 { const DTYPE: DType = DType::U64; }

/// A failure: its status and the message `ti_last_error` returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub status: Status,
    pub message: String,
}

impl Error {
    pub fn new(status: Status, message: impl Into<String>) -> Error {
        Error { status, message: message.into() }
    }
    pub fn invalid(message: impl Into<String>) -> Error { Error::new(Status::InvalidArgument, message) }
    pub fn io(message: impl Into<String>) -> Error { Error::new(Status::Io, message) }
    pub fn format(message: impl Into<String>) -> Error { Error::new(Status::Format, message) }
    pub fn state(message: impl Into<String>) -> Error { Error::new(Status::State, message) }
    pub fn shape(message: impl Into<String>) -> Error { Error::new(Status::Shape, message) }
    pub fn unknown(message: impl Into<String>) -> Error { Error::new(Status::UnknownName, message) }
    pub fn internal(message: impl Into<String>) -> Error { Error::new(Status::Internal, message) }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.status.name(), self.message)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// One extent of a declared shape: a fixed size or a symbol (`"T"`, `"N"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dim {
    Fixed(i64),
    Symbol(String),
}

impl Dim {
    pub fn sym(name: &str) -> Dim { Dim::Symbol(name.to_string()) }
}

impl From<i64> for Dim {
    fn from(size: i64) -> Dim { Dim::Fixed(size) }
}

/// Declared type of an engine option.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionKind {
    Bool(bool),
    Int(i64),
    Text(String),
}

#[derive(Clone, Debug)]
pub struct InputDecl {
    pub name: String,
    pub dtype: DType,
    pub shape: Vec<Dim>,
    pub required: bool,
    pub doc: String,
}

#[derive(Clone, Debug)]
pub struct BoundaryDecl {
    pub name: String,
    pub stage: String,
    pub dtype: DType,
    pub shape: Vec<Dim>,
    /// "every_pass", "prefill", ... (trace_abi.h).
    pub emit: String,
    pub injectable: bool,
    pub doc: String,
}

#[derive(Clone, Debug)]
pub struct OptionDecl {
    pub name: String,
    pub default: OptionKind,
    pub doc: String,
}

/// What `ti_describe` says: the engine, its model dimensions, inputs, boundaries (in execution
/// order) and options.
#[derive(Clone, Debug)]
pub struct Catalogue {
    pub name: String,
    pub version: String,
    pub build_id: String,
    /// A JSON object of free-form model dimensions.
    pub model_json: String,
    pub inputs: Vec<InputDecl>,
    pub boundaries: Vec<BoundaryDecl>,
    pub options: Vec<OptionDecl>,
}

impl Catalogue {
    pub fn new(name: &str, version: &str, build_id: &str) -> Catalogue {
        Catalogue {
            name: name.into(),
            version: version.into(),
            build_id: build_id.into(),
            model_json: "{}".into(),
            inputs: Vec::new(),
            boundaries: Vec::new(),
            options: Vec::new(),
        }
    }
    pub fn input(&mut self, name: &str, dtype: DType, shape: &[Dim], required: bool, doc: &str) -> &mut Self {
        self.inputs.push(InputDecl { name: name.into(), dtype, shape: shape.to_vec(), required, doc: doc.into() });
        self
    }
    /// A boundary emitted every pass, not injectable, staged by the name's first dotted part.
    pub fn boundary(&mut self, name: &str, dtype: DType, shape: &[Dim], doc: &str) -> &mut BoundaryDecl {
        let stage = name.split('.').next().unwrap_or(name).to_string();
        self.boundaries.push(BoundaryDecl {
            name: name.into(),
            stage,
            dtype,
            shape: shape.to_vec(),
            emit: "every_pass".into(),
            injectable: false,
            doc: doc.into(),
        });
        self.boundaries.last_mut().expect("just pushed")
    }
    pub fn option(&mut self, name: &str, default: OptionKind, doc: &str) -> &mut Self {
        self.options.push(OptionDecl { name: name.into(), default, doc: doc.into() });
        self
    }

    /// The `ti_describe` JSON.
    pub fn to_json(&self) -> String {
        use json::quote;
        let shape = |dims: &[Dim]| {
            let parts: Vec<String> = dims.iter().map(|d| match d { Dim::Fixed(n) => n.to_string(), Dim::Symbol(s) => quote(s) }).collect();
            format!("[{}]", parts.join(","))
        };
        let inputs: Vec<String> = self.inputs.iter().map(|i| {
            format!("{{\"name\":{},\"dtype\":\"{}\",\"shape\":{},\"required\":{},\"doc\":{}}}",
                    quote(&i.name), i.dtype.name(), shape(&i.shape), i.required, quote(&i.doc))
        }).collect();
        let boundaries: Vec<String> = self.boundaries.iter().map(|b| {
            format!("{{\"name\":{},\"stage\":{},\"dtype\":\"{}\",\"shape\":{},\"emit\":{},\"injectable\":{},\"doc\":{}}}",
                    quote(&b.name), quote(&b.stage), b.dtype.name(), shape(&b.shape), quote(&b.emit), b.injectable, quote(&b.doc))
        }).collect();
        let options: Vec<String> = self.options.iter().map(|o| {
            let (kind, default) = match &o.default {
                OptionKind::Bool(v) => ("bool", v.to_string()),
                OptionKind::Int(v) => ("int", v.to_string()),
                OptionKind::Text(v) => ("string", quote(v)),
            };
            format!("{{\"name\":{},\"type\":\"{kind}\",\"default\":{default},\"doc\":{}}}", quote(&o.name), quote(&o.doc))
        }).collect();
        format!(
            "{{\"abi_version\":1,\"engine\":{{\"name\":{},\"version\":{},\"build_id\":{}}},\"model\":{},\"inputs\":[{}],\"boundaries\":[{}],\"options\":[{}]}}",
            quote(&self.name), quote(&self.version), quote(&self.build_id), self.model_json,
            inputs.join(","), boundaries.join(","), options.join(",")
        )
    }
}

/// A catalogue prepared for the FFI: its JSON and NUL-terminated boundary names, built once.
pub struct Described {
    pub catalogue: Catalogue,
    pub json: CString,
    names: Vec<CString>,
    by_name: HashMap<String, usize>,
}

impl Described {
    pub fn new(catalogue: Catalogue) -> Described {
        let json = CString::new(catalogue.to_json()).unwrap_or_else(|_| CString::new("{}").expect("no NUL"));
        let names = catalogue.boundaries.iter().map(|b| CString::new(b.name.clone()).unwrap_or_default()).collect();
        let by_name = catalogue.boundaries.iter().enumerate().map(|(i, b)| (b.name.clone(), i)).collect();
        Described { catalogue, json, names, by_name }
    }
}

/// An input as the host set it (owned by the session).
pub struct Tensor<'a, T> {
    pub data: &'a [T],
    pub shape: &'a [i64],
}

struct StoredTensor {
    shape: Vec<i64>,
    /// u64 words keep the bytes 8-aligned, so any Element can view them.
    words: Vec<u64>,
    bytes: usize,
}

impl StoredTensor {
    fn new(shape: &[i64], data: &[u8]) -> StoredTensor {
        let mut words = vec![0u64; data.len().div_ceil(8)];
        // SAFETY: words holds at least data.len() bytes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), words.as_mut_ptr() as *mut u8, data.len()) };
        StoredTensor { shape: shape.to_vec(), words, bytes: data.len() }
    }
    fn view<T: Element>(&self) -> &[T] {
        // SAFETY: 8-aligned, bytes / size_of::<T>() elements in bounds, every bit pattern valid (Element).
        unsafe { std::slice::from_raw_parts(self.words.as_ptr() as *const T, self.bytes / std::mem::size_of::<T>()) }
    }
}

/// Everything a session keeps besides the engine itself.
pub struct SessionCore {
    described: &'static Described,
    inputs: Vec<Option<StoredTensor>>,
    options: Vec<OptionKind>,
    injections: Vec<Option<StoredTensor>>,
    wanted: Option<Vec<bool>>,
    record: Option<RecordFn>,
    record_user: *mut c_void,
    passes_run: u32,
}

impl SessionCore {
    fn new(described: &'static Described) -> SessionCore {
        let c = &described.catalogue;
        SessionCore {
            described,
            inputs: c.inputs.iter().map(|_| None).collect(),
            options: c.options.iter().map(|o| o.default.clone()).collect(),
            injections: c.boundaries.iter().map(|_| None).collect(),
            wanted: None,
            record: None,
            record_user: std::ptr::null_mut(),
            passes_run: 0,
        }
    }

    fn symbol(&self, symbol: &str, except: Option<usize>) -> Option<i64> {
        let c = &self.described.catalogue;
        for (i, input) in c.inputs.iter().enumerate() {
            if Some(i) == except {
                continue;
            }
            if let Some(stored) = &self.inputs[i] {
                for (d, dim) in input.shape.iter().enumerate() {
                    if matches!(dim, Dim::Symbol(s) if s == symbol) {
                        return stored.shape.get(d).copied();
                    }
                }
            }
        }
        None
    }

    /// dtype, rank, fixed and input-bound extents and byte length of a tensor handed in by the host.
    fn check(&self, what: &str, dtype: DType, declared: &[Dim], got: u32, shape: &[i64], bytes: usize, except: Option<usize>) -> Result<()> {
        if got != dtype as u32 {
            let name = DType::from_u32(got).map(DType::name).unwrap_or("unknown");
            return Err(Error::shape(format!("{what}: dtype {name}, the catalogue declares {}", dtype.name())));
        }
        if shape.len() != declared.len() {
            return Err(Error::shape(format!("{what}: rank {}, the catalogue declares rank {}", shape.len(), declared.len())));
        }
        for (d, (dim, &extent)) in declared.iter().zip(shape).enumerate() {
            let want = match dim {
                Dim::Fixed(n) => Some(*n),
                Dim::Symbol(s) => self.symbol(s, except),
            };
            if extent < 0 || want.is_some_and(|w| w != extent) {
                let declared = match dim { Dim::Fixed(n) => n.to_string(), Dim::Symbol(s) => format!("{s} = {}", want.unwrap_or(-1)) };
                return Err(Error::shape(format!("{what}: extent {d} is {extent}, expected {declared}")));
            }
        }
        let count = shape.iter().try_fold(1usize, |n, &e| n.checked_mul(e as usize));
        if count.and_then(|n| n.checked_mul(dtype.size())) != Some(bytes) {
            return Err(Error::shape(format!("{what}: {bytes} bytes for shape {shape:?} of {}", dtype.name())));
        }
        Ok(())
    }

    fn boundary(&self, name: &str) -> Result<usize> {
        self.described.by_name.get(name).copied().ok_or_else(|| Error::unknown(format!("unknown boundary \"{name}\"")))
    }
}

/// What an engine sees during one pass: its index, the inputs and options, and the record calls.
pub struct Pass<'a> {
    core: &'a mut SessionCore,
}

impl<'a> Pass<'a> {
    /// 0 for the prefill, 1.. for decode passes.
    pub fn index(&self) -> u32 { self.core.passes_run }

    /// An input, viewed as T (its declared dtype). Required inputs are present from prefill on.
    pub fn input<T: Element>(&self, name: &str) -> Result<Tensor<'_, T>> {
        let c = &self.core.described.catalogue;
        let i = c.inputs.iter().position(|x| x.name == name).ok_or_else(|| Error::unknown(format!("unknown input \"{name}\"")))?;
        if c.inputs[i].dtype != T::DTYPE {
            return Err(Error::internal(format!("input {name} is {}, read as {}", c.inputs[i].dtype.name(), T::DTYPE.name())));
        }
        let stored = self.core.inputs[i].as_ref().ok_or_else(|| Error::state(format!("input {name} was not set")))?;
        Ok(Tensor { data: stored.view::<T>(), shape: &stored.shape })
    }

    fn option(&self, name: &str) -> &OptionKind {
        let c = &self.core.described.catalogue;
        match c.options.iter().position(|o| o.name == name) {
            Some(i) => &self.core.options[i],
            None => panic!("option {name} is not in the catalogue"),
        }
    }
    /// A declared bool option (panics, caught at the FFI boundary, for an undeclared one).
    pub fn option_bool(&self, name: &str) -> bool { matches!(self.option(name), OptionKind::Bool(true)) }
    pub fn option_int(&self, name: &str) -> i64 { if let OptionKind::Int(v) = self.option(name) { *v } else { 0 } }
    pub fn option_text(&self, name: &str) -> &str { if let OptionKind::Text(v) = self.option(name) { v } else { "" } }

    /// Is anyone listening for this boundary? Skip building a value that exists only to be recorded.
    pub fn wanted(&self, name: &str) -> bool {
        self.core.record.is_some() && self.core.boundary(name).is_ok_and(|i| self.core.wanted.as_ref().is_none_or(|w| w[i]))
    }

    /// Record a contiguous row-major tensor.
    pub fn emit<T: Element>(&mut self, name: &str, data: &[T], shape: &[i64]) -> Result<()> {
        let mut strides = vec![1i64; shape.len()];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * shape[d + 1];
        }
        self.emit_strided(name, data, shape, &strides)
    }

    /// Record a tensor whose memory order the strides (in elements) describe.
    pub fn emit_strided<T: Element>(&mut self, name: &str, data: &[T], shape: &[i64], strides: &[i64]) -> Result<()> {
        let i = self.core.boundary(name)?;
        let declared = &self.core.described.catalogue.boundaries[i];
        if declared.dtype != T::DTYPE {
            return Err(Error::internal(format!("emit {name}: {} data, the catalogue declares {}", T::DTYPE.name(), declared.dtype.name())));
        }
        if shape.len() != strides.len() || shape.len() > 8 {
            return Err(Error::internal(format!("emit {name}: rank {} with {} strides", shape.len(), strides.len())));
        }
        let span = if shape.contains(&0) { 0 } else { 1 + shape.iter().zip(strides).map(|(&e, &s)| (e - 1) * s).sum::<i64>() };
        if span < 0 || span as usize > data.len() {
            return Err(Error::internal(format!("emit {name}: shape {shape:?} with strides {strides:?} addresses {span} elements, the buffer holds {}", data.len())));
        }
        let Some(callback) = self.core.record else { return Ok(()) };
        if self.core.wanted.as_ref().is_some_and(|w| !w[i]) {
            return Ok(());
        }
        let record = ffi::TiRecord {
            pass_index: self.core.passes_run,
            pass_kind: if self.core.passes_run == 0 { 0 } else { 1 },
            name: self.core.described.names[i].as_ptr(),
            dtype: T::DTYPE as u32,
            rank: shape.len() as u32,
            shape: shape.as_ptr(),
            strides: strides.as_ptr(),
            data: data.as_ptr() as *const c_void,
            byte_length: (span as usize * std::mem::size_of::<T>()) as u64,
        };
        // SAFETY: the host's callback, with a record valid for the duration of the call.
        let verdict = unsafe { callback(self.core.record_user, &record) };
        if verdict == 0 { Ok(()) } else { Err(Error::new(Status::Aborted, format!("stopped by the host at {name}"))) }
    }

    /// At an injectable boundary: record `data` (the engine's own value), then, when the host
    /// injected a value for this pass, check its extents against `shape` and copy it over `data`
    /// so everything downstream follows it.
    pub fn emit_injectable<T: Element>(&mut self, name: &str, data: &mut [T], shape: &[i64]) -> Result<()> {
        self.emit(name, data, shape)?;
        let i = self.core.boundary(name)?;
        if let Some(injected) = &self.core.injections[i] {
            if injected.shape != shape {
                return Err(Error::shape(format!("injection at {name}: shape {:?}, this pass computes {shape:?}", injected.shape)));
            }
            let values = injected.view::<T>();
            // emit accepted data holding at least the shape's elements; the injection has exactly them.
            data[..values.len()].copy_from_slice(values);
        }
        Ok(())
    }
}

/// A native inference engine. One value per session; the crate keeps everything else.
pub trait Engine: Sized + 'static {
    /// The catalogue (called once per loaded library).
    fn catalogue() -> Catalogue;
    /// Open a session: read the weights (`weights` is the path the host was given; None when the
    /// reference names no weights, for an engine that embeds or generates them).
    fn open(config_json: &str, weights: Option<&str>) -> Result<Self>;
    /// Run one pass (`pass.index()` 0 is the prefill) and record its boundaries.
    fn pass(&mut self, pass: &mut Pass<'_>) -> Result<()>;
    /// Return to the state before prefill (inputs and options are kept by the crate).
    fn reset(&mut self) -> Result<()> {
        Err(Error::state("this engine cannot rewind its state; open a new session"))
    }
    /// Extra members of `ti_session_state`, as `"key":value,...` without braces.
    fn state_json(&self) -> String {
        String::new()
    }
}

/// Exports the `ti_` symbols of ABI 1 for an [`Engine`] type from a `cdylib`.
#[macro_export]
macro_rules! export_engine {
    ($engine:ty) => {
        static __TI_DESCRIBED: ::std::sync::OnceLock<::std::option::Option<$crate::Described>> = ::std::sync::OnceLock::new();
        fn __ti_described() -> ::std::option::Option<&'static $crate::Described> {
            __TI_DESCRIBED.get_or_init(|| $crate::ffi::describe::<$engine>()).as_ref()
        }
        #[no_mangle]
        pub extern "C" fn ti_abi_version() -> u32 { 1 }
        #[no_mangle]
        pub extern "C" fn ti_describe() -> *const ::std::ffi::c_char { $crate::ffi::describe_json(__ti_described()) }
        #[no_mangle]
        pub extern "C" fn ti_status_string(status: u32) -> *const ::std::ffi::c_char { $crate::ffi::status_string(status) }
        #[no_mangle]
        pub unsafe extern "C" fn ti_open(config: *const ::std::ffi::c_char, weights: *const ::std::ffi::c_char,
                                         out: *mut *mut ::std::ffi::c_void, err: *mut ::std::ffi::c_char, cap: usize) -> u32 {
            $crate::ffi::open::<$engine>(__ti_described(), config, weights, out, err, cap)
        }
        #[no_mangle]
        pub unsafe extern "C" fn ti_close(s: *mut ::std::ffi::c_void) { $crate::ffi::close::<$engine>(s) }
        #[no_mangle]
        pub unsafe extern "C" fn ti_last_error(s: *const ::std::ffi::c_void) -> *const ::std::ffi::c_char { $crate::ffi::last_error::<$engine>(s) }
        #[no_mangle]
        pub unsafe extern "C" fn ti_set_input(s: *mut ::std::ffi::c_void, name: *const ::std::ffi::c_char, dtype: u32, rank: u32,
                                              shape: *const i64, data: *const ::std::ffi::c_void, bytes: u64) -> u32 {
            $crate::ffi::set_input::<$engine>(s, name, dtype, rank, shape, data, bytes)
        }
        #[no_mangle]
        pub unsafe extern "C" fn ti_set_option(s: *mut ::std::ffi::c_void, key: *const ::std::ffi::c_char, value: *const ::std::ffi::c_char) -> u32 {
            $crate::ffi::set_option::<$engine>(s, key, value)
        }
        #[no_mangle]
        pub unsafe extern "C" fn ti_set_record_callback(s: *mut ::std::ffi::c_void, f: ::std::option::Option<$crate::RecordFn>, user: *mut ::std::ffi::c_void) -> u32 {
            $crate::ffi::set_record_callback::<$engine>(s, f, user)
        }
        #[no_mangle]
        pub unsafe extern "C" fn ti_set_wanted(s: *mut ::std::ffi::c_void, names: *const *const ::std::ffi::c_char, count: u32) -> u32 {
            $crate::ffi::set_wanted::<$engine>(s, names, count)
        }
        #[no_mangle]
        pub unsafe extern "C" fn ti_inject(s: *mut ::std::ffi::c_void, name: *const ::std::ffi::c_char, dtype: u32, rank: u32,
                                           shape: *const i64, data: *const ::std::ffi::c_void, bytes: u64) -> u32 {
            $crate::ffi::inject::<$engine>(s, name, dtype, rank, shape, data, bytes)
        }
        #[no_mangle]
        pub unsafe extern "C" fn ti_prefill(s: *mut ::std::ffi::c_void) -> u32 { $crate::ffi::run_pass::<$engine>(s, true) }
        #[no_mangle]
        pub unsafe extern "C" fn ti_decode(s: *mut ::std::ffi::c_void) -> u32 { $crate::ffi::run_pass::<$engine>(s, false) }
        #[no_mangle]
        pub unsafe extern "C" fn ti_reset(s: *mut ::std::ffi::c_void) -> u32 { $crate::ffi::reset::<$engine>(s) }
        #[no_mangle]
        pub unsafe extern "C" fn ti_session_state(s: *mut ::std::ffi::c_void) -> *const ::std::ffi::c_char { $crate::ffi::session_state::<$engine>(s) }
    };
}
