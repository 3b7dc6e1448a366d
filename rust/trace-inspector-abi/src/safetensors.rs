//! Reads safetensors files (an 8-byte little-endian header length, a JSON header, then the
//! tensors back to back), the format trace bundles and most model weights use. Errors name the
//! file and the tensor.
use crate::json::{self, Value};
use crate::{Error, Result};

/// One tensor of a file: its dtype name ("F32"), shape and raw little-endian bytes.
pub struct TensorData {
    pub dtype: String,
    pub shape: Vec<usize>,
    pub bytes: Vec<u8>,
}

impl TensorData {
    /// The values of an F32 tensor.
    pub fn f32s(&self) -> Vec<f32> {
        self.bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
    }
}

pub struct SafeTensors {
    pub path: String,
    /// The header's `__metadata__` (string to string).
    pub metadata: Vec<(String, String)>,
    tensors: Vec<(String, TensorData)>,
}

impl SafeTensors {
    pub fn open(path: &str) -> Result<SafeTensors> {
        let raw = std::fs::read(path).map_err(|e| Error::io(format!("{path}: {e}")))?;
        let bad = |what: String| Error::format(format!("{path}: {what}"));
        if raw.len() < 8 {
            return Err(bad("shorter than the 8-byte header length".into()));
        }
        let n = u64::from_le_bytes(raw[..8].try_into().expect("8 bytes")) as usize;
        let header = raw.get(8..8usize.saturating_add(n)).ok_or_else(|| bad(format!("header of {n} bytes runs past the end")))?;
        let header = std::str::from_utf8(header).map_err(|_| bad("header is not UTF-8".into()))?;
        let Value::Object(members) = json::parse(header).map_err(|e| bad(format!("header: {e}")))? else {
            return Err(bad("header is not a JSON object".into()));
        };
        let data = &raw[8 + n..];
        let mut tensors = Vec::new();
        let mut metadata = Vec::new();
        for (name, info) in members {
            if name == "__metadata__" {
                let Value::Object(entries) = info else { return Err(bad("__metadata__ is not an object".into())) };
                for (key, value) in entries {
                    let Value::Text(text) = value else { return Err(bad(format!("__metadata__.{key} is not a string"))) };
                    metadata.push((key, text));
                }
                continue;
            }
            let Some(Value::Text(dtype)) = info.get("dtype") else { return Err(bad(format!("tensor {name}: no dtype"))) };
            let numbers = |key: &str| -> Result<Vec<usize>> {
                match info.get(key) {
                    Some(Value::Array(items)) => items.iter().map(|v| match v {
                        Value::Number(x) if *x >= 0.0 && x.fract() == 0.0 => Ok(*x as usize),
                        _ => Err(bad(format!("tensor {name}: {key} holds a non-integer"))),
                    }).collect(),
                    _ => Err(bad(format!("tensor {name}: no {key}"))),
                }
            };
            let shape = numbers("shape")?;
            let offsets = numbers("data_offsets")?;
            let (begin, end) = match offsets[..] {
                [b, e] if b <= e && e <= data.len() => (b, e),
                _ => return Err(bad(format!("tensor {name}: data_offsets {offsets:?} outside the {} data bytes", data.len()))),
            };
            tensors.push((name, TensorData { dtype: dtype.clone(), shape, bytes: data[begin..end].to_vec() }));
        }
        Ok(SafeTensors { path: path.to_string(), metadata, tensors })
    }

    /// A `__metadata__` entry.
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    pub fn get(&self, name: &str) -> Result<&TensorData> {
        self.tensors.iter().find(|(n, _)| n == name).map(|(_, t)| t)
            .ok_or_else(|| Error::format(format!("{}: no tensor {name}", self.path)))
    }

    /// An F32 tensor's values after checking its shape.
    pub fn f32_tensor(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
        let t = self.get(name)?;
        if t.dtype != "F32" || t.shape != shape || t.bytes.len() != shape.iter().product::<usize>() * 4 {
            return Err(Error::format(format!("{}: tensor {name} is {} {:?}, expected F32 {shape:?}", self.path, t.dtype, t.shape)));
        }
        Ok(t.f32s())
    }
}
