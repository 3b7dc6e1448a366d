//! The C side: `ti_record`, and the bodies of the exported `ti_` functions that
//! [`export_engine!`](crate::export_engine) generates. Every pointer from the host is checked for
//! NULL; every call into engine code runs under `catch_unwind`, so a panic becomes
//! `TI_ERR_INTERNAL` with its message and poisons the session (later passes are refused).
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::{Described, Engine, Error, OptionKind, Pass, SessionCore, Status, StoredTensor};

/// `ti_record` (trace_abi.h).
#[repr(C)]
pub struct TiRecord {
    pub pass_index: u32,
    pub pass_kind: u32,
    pub name: *const c_char,
    pub dtype: u32,
    pub rank: u32,
    pub shape: *const i64,
    pub strides: *const i64,
    pub data: *const c_void,
    pub byte_length: u64,
}

/// `ti_record_fn`: return 0 to continue.
pub type RecordFn = unsafe extern "C" fn(user: *mut c_void, record: *const TiRecord) -> c_int;

struct Session<E> {
    core: SessionCore,
    engine: Option<E>,
    error: CString,
    state: CString,
    /// Set when engine code panicked: its state may be half-updated.
    poisoned: Option<String>,
}

impl<E> Session<E> {
    fn fail(&mut self, error: Error) -> u32 {
        self.error = CString::new(error.message.replace('\0', " ")).unwrap_or_default();
        error.status as u32
    }
    fn done(&mut self, result: crate::Result<()>) -> u32 {
        match result {
            Ok(()) => Status::Ok as u32,
            Err(error) => self.fail(error),
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Runs engine code; a panic becomes Err(TI_ERR_INTERNAL "the engine panicked: ...").
fn guarded<T>(what: &str, call: impl FnOnce() -> crate::Result<T>) -> crate::Result<T> {
    match catch_unwind(AssertUnwindSafe(call)) {
        Ok(result) => result,
        Err(payload) => Err(Error::internal(format!("the engine panicked in {what}: {}", panic_message(payload.as_ref())))),
    }
}

unsafe fn text<'a>(ptr: *const c_char) -> Option<&'a str> {
    if ptr.is_null() {
        None
    } else {
        CStr::from_ptr(ptr).to_str().ok()
    }
}

unsafe fn session<'a, E>(ptr: *mut c_void) -> Option<&'a mut Session<E>> {
    (ptr as *mut Session<E>).as_mut()
}

/// Builds the catalogue (None when `E::catalogue` panics: ti_describe then says so).
pub fn describe<E: Engine>() -> Option<Described> {
    catch_unwind(E::catalogue).ok().map(Described::new)
}

pub fn describe_json(described: Option<&'static Described>) -> *const c_char {
    match described {
        Some(d) => d.json.as_ptr(),
        None => c"{\"error\":\"the engine panicked while building its catalogue\"}".as_ptr(),
    }
}

pub fn status_string(status: u32) -> *const c_char {
    const NAMES: [&CStr; 10] = [
        c"TI_OK", c"TI_ERR_INVALID_ARGUMENT", c"TI_ERR_IO", c"TI_ERR_FORMAT", c"TI_ERR_STATE",
        c"TI_ERR_UNKNOWN_NAME", c"TI_ERR_SHAPE", c"TI_ERR_OUT_OF_MEMORY", c"TI_ERR_ABORTED", c"TI_ERR_INTERNAL",
    ];
    NAMES.get(status as usize).copied().unwrap_or(c"TI_ERR_UNKNOWN_STATUS").as_ptr()
}

unsafe fn write_err(err: *mut c_char, cap: usize, message: &str) {
    if err.is_null() || cap == 0 {
        return;
    }
    let bytes = message.as_bytes();
    let n = bytes.len().min(cap - 1);
    std::ptr::copy_nonoverlapping(bytes.as_ptr() as *const c_char, err, n);
    *err.add(n) = 0;
}

/// # Safety
/// Pointers as trace_abi.h describes them for `ti_open`.
pub unsafe fn open<E: Engine>(described: Option<&'static Described>, config: *const c_char, weights: *const c_char,
                              out: *mut *mut c_void, err: *mut c_char, cap: usize) -> u32 {
    write_err(err, cap, "");
    if out.is_null() {
        write_err(err, cap, "ti_open: out is NULL");
        return Status::InvalidArgument as u32;
    }
    *out = std::ptr::null_mut();
    let Some(described) = described else {
        write_err(err, cap, "the engine panicked while building its catalogue");
        return Status::Internal as u32;
    };
    let config = text(config).unwrap_or("{}");
    let weights = text(weights).filter(|w| !w.is_empty());
    match guarded("open", || E::open(config, weights)) {
        Ok(engine) => {
            let s = Session { core: SessionCore::new(described), engine: Some(engine), error: CString::default(), state: CString::default(), poisoned: None };
            *out = Box::into_raw(Box::new(s)) as *mut c_void;
            Status::Ok as u32
        }
        Err(error) => {
            write_err(err, cap, &error.message);
            error.status as u32
        }
    }
}

/// # Safety
/// `s` is NULL or a session from `open::<E>`, not used after.
pub unsafe fn close<E: Engine>(s: *mut c_void) {
    if !s.is_null() {
        let session = Box::from_raw(s as *mut Session<E>);
        // Dropping engine state may run engine code: keep a panic there on this side too.
        let _ = catch_unwind(AssertUnwindSafe(move || drop(session)));
    }
}

/// # Safety
/// `s` is NULL or a live session.
pub unsafe fn last_error<E: Engine>(s: *const c_void) -> *const c_char {
    match (s as *const Session<E>).as_ref() {
        Some(session) => session.error.as_ptr(),
        None => c"".as_ptr(),
    }
}

unsafe fn shape_of<'a>(rank: u32, shape: *const i64) -> Result<&'a [i64], Error> {
    if rank > 8 {
        return Err(Error::shape(format!("rank {rank} exceeds 8")));
    }
    if rank > 0 && shape.is_null() {
        return Err(Error::invalid("shape is NULL"));
    }
    Ok(if rank == 0 { &[] } else { std::slice::from_raw_parts(shape, rank as usize) })
}

unsafe fn bytes_of<'a>(data: *const c_void, bytes: u64) -> Result<&'a [u8], Error> {
    if bytes > 0 && data.is_null() {
        return Err(Error::invalid("data is NULL"));
    }
    Ok(if bytes == 0 { &[] } else { std::slice::from_raw_parts(data as *const u8, bytes as usize) })
}

/// # Safety
/// Pointers as trace_abi.h describes them for `ti_set_input`.
pub unsafe fn set_input<E: Engine>(s: *mut c_void, name: *const c_char, dtype: u32, rank: u32, shape: *const i64,
                                   data: *const c_void, bytes: u64) -> u32 {
    let Some(session) = session::<E>(s) else { return Status::InvalidArgument as u32 };
    let Some(name) = text(name) else { return session.fail(Error::invalid("ti_set_input: name is NULL or not UTF-8")) };
    let result = (|| {
        let core = &mut session.core;
        if core.passes_run > 0 {
            return Err(Error::state(format!("input {name}: inputs are set before prefill (ti_reset first)")));
        }
        let c = &core.described.catalogue;
        let i = c.inputs.iter().position(|x| x.name == name)
            .ok_or_else(|| Error::unknown(format!("unknown input \"{name}\" (ti_describe lists the inputs)")))?;
        let shape = shape_of(rank, shape)?;
        let data = bytes_of(data, bytes)?;
        core.check(&format!("input {name}"), c.inputs[i].dtype, &c.inputs[i].shape, dtype, shape, data.len(), Some(i))?;
        core.inputs[i] = Some(StoredTensor::new(shape, data));
        Ok(())
    })();
    session.done(result)
}

/// # Safety
/// Pointers as trace_abi.h describes them for `ti_set_option`.
pub unsafe fn set_option<E: Engine>(s: *mut c_void, key: *const c_char, value: *const c_char) -> u32 {
    let Some(session) = session::<E>(s) else { return Status::InvalidArgument as u32 };
    let (Some(key), Some(value)) = (text(key), text(value)) else { return session.fail(Error::invalid("ti_set_option: key and value are required")) };
    let c = &session.core.described.catalogue;
    let Some(i) = c.options.iter().position(|o| o.name == key) else {
        return session.fail(Error::unknown(format!("unknown option \"{key}\" (ti_describe lists the options)")));
    };
    let parsed = match &c.options[i].default {
        OptionKind::Bool(_) => match value {
            "1" | "true" => Ok(OptionKind::Bool(true)),
            "0" | "false" | "" => Ok(OptionKind::Bool(false)),
            _ => Err(Error::invalid(format!("option {key}: expected 0, 1, true or false, found \"{value}\""))),
        },
        OptionKind::Int(_) => value.parse::<i64>().map(OptionKind::Int)
            .map_err(|_| Error::invalid(format!("option {key}: expected an integer, found \"{value}\""))),
        OptionKind::Text(_) => Ok(OptionKind::Text(value.to_string())),
    };
    match parsed {
        Ok(v) => {
            session.core.options[i] = v;
            Status::Ok as u32
        }
        Err(error) => session.fail(error),
    }
}

/// # Safety
/// `s` is NULL or a live session; `f` is a valid callback for as long as it is registered.
pub unsafe fn set_record_callback<E: Engine>(s: *mut c_void, f: Option<RecordFn>, user: *mut c_void) -> u32 {
    let Some(session) = session::<E>(s) else { return Status::InvalidArgument as u32 };
    session.core.record = f;
    session.core.record_user = user;
    Status::Ok as u32
}

/// # Safety
/// `names` holds `count` NUL-terminated strings.
pub unsafe fn set_wanted<E: Engine>(s: *mut c_void, names: *const *const c_char, count: u32) -> u32 {
    let Some(session) = session::<E>(s) else { return Status::InvalidArgument as u32 };
    if count == 0 {
        session.core.wanted = None;
        return Status::Ok as u32;
    }
    if names.is_null() {
        return session.fail(Error::invalid("ti_set_wanted: names is NULL"));
    }
    let mut wanted = vec![false; session.core.described.catalogue.boundaries.len()];
    for k in 0..count as usize {
        let Some(name) = text(*names.add(k)) else { return session.fail(Error::invalid(format!("ti_set_wanted: names[{k}] is NULL"))) };
        match session.core.boundary(name) {
            Ok(i) => wanted[i] = true,
            Err(error) => return session.fail(error),
        }
    }
    session.core.wanted = Some(wanted);
    Status::Ok as u32
}

/// # Safety
/// Pointers as trace_abi.h describes them for `ti_inject`.
pub unsafe fn inject<E: Engine>(s: *mut c_void, name: *const c_char, dtype: u32, rank: u32, shape: *const i64,
                                data: *const c_void, bytes: u64) -> u32 {
    let Some(session) = session::<E>(s) else { return Status::InvalidArgument as u32 };
    let Some(name) = text(name) else { return session.fail(Error::invalid("ti_inject: boundary is NULL")) };
    let result = (|| {
        let core = &mut session.core;
        let i = core.boundary(name)?;
        let declared = &core.described.catalogue.boundaries[i];
        if !declared.injectable {
            return Err(Error::invalid(format!("boundary {name} does not accept injection (the catalogue says injectable: false)")));
        }
        let shape = shape_of(rank, shape)?;
        let data = bytes_of(data, bytes)?;
        core.check(&format!("injection at {name}"), declared.dtype, &declared.shape, dtype, shape, data.len(), None)?;
        core.injections[i] = Some(StoredTensor::new(shape, data));
        Ok(())
    })();
    session.done(result)
}

/// # Safety
/// `s` is NULL or a live session.
pub unsafe fn run_pass<E: Engine>(s: *mut c_void, prefill: bool) -> u32 {
    let Some(session) = session::<E>(s) else { return Status::InvalidArgument as u32 };
    if let Some(panic) = &session.poisoned {
        let message = format!("the engine panicked earlier in this session ({panic}); open a new session");
        return session.fail(Error::state(message));
    }
    let core = &mut session.core;
    if prefill && core.passes_run != 0 {
        return session.fail(Error::state("prefill already ran; call ti_reset first"));
    }
    if !prefill && core.passes_run == 0 {
        return session.fail(Error::state("decode before prefill"));
    }
    let c = &core.described.catalogue;
    if let Some(missing) = c.inputs.iter().zip(&core.inputs).find(|(decl, stored)| decl.required && stored.is_none()) {
        let message = format!("set input {} before prefill", missing.0.name);
        return session.fail(Error::state(message));
    }
    let Some(engine) = session.engine.as_mut() else { return session.fail(Error::state("the session has no engine")) };
    let result = guarded(&format!("pass {}", core.passes_run), || engine.pass(&mut Pass { core }));
    // Injections hold for one pass, whether it completed or not.
    for slot in session.core.injections.iter_mut() {
        *slot = None;
    }
    match result {
        Ok(()) => {
            session.core.passes_run += 1;
            Status::Ok as u32
        }
        Err(error) => {
            if error.status == Status::Internal && error.message.starts_with("the engine panicked") {
                session.poisoned = Some(error.message.clone());
            }
            session.fail(error)
        }
    }
}

/// # Safety
/// `s` is NULL or a live session.
pub unsafe fn reset<E: Engine>(s: *mut c_void) -> u32 {
    let Some(session) = session::<E>(s) else { return Status::InvalidArgument as u32 };
    if session.poisoned.is_some() {
        return session.fail(Error::state("the engine panicked earlier in this session; open a new session"));
    }
    let Some(engine) = session.engine.as_mut() else { return session.fail(Error::state("the session has no engine")) };
    match guarded("reset", || engine.reset()) {
        Ok(()) => {
            session.core.passes_run = 0;
            for slot in session.core.injections.iter_mut() {
                *slot = None;
            }
            Status::Ok as u32
        }
        Err(error) => session.fail(error),
    }
}

/// # Safety
/// `s` is NULL or a live session.
pub unsafe fn session_state<E: Engine>(s: *mut c_void) -> *const c_char {
    let Some(session) = session::<E>(s) else { return c"{}".as_ptr() };
    let extra = match (&session.poisoned, session.engine.as_ref()) {
        (None, Some(engine)) => guarded("state_json", || Ok(engine.state_json())).unwrap_or_default(),
        _ => String::new(),
    };
    let text = if extra.is_empty() {
        format!("{{\"passes_run\":{}}}", session.core.passes_run)
    } else {
        format!("{{\"passes_run\":{},{extra}}}", session.core.passes_run)
    };
    session.state = CString::new(text).unwrap_or_default();
    session.state.as_ptr()
}
