//! The NAM WaveNet (examples/nam/nam_model.py) in plain Rust, float32, one buffer at a time.
//! Tensors are [channels][time] row-major. `probe` sees every boundary the reference records.
use trace_inspector_abi::json::{self, Value};
use trace_inspector_abi::safetensors::SafeTensors;
use trace_inspector_abi::{Error, Result};

/// examples/nam/config.json, compiled in: the catalogue is known before any weights are opened.
pub const CONFIG_JSON: &str = include_str!("../../config.json");

pub struct ArrayConfig {
    pub input_size: usize,
    pub condition_size: usize,
    pub channels: usize,
    pub head_size: usize,
    pub kernel_size: usize,
    pub dilations: Vec<usize>,
    pub head_bias: bool,
}

pub struct Config {
    pub head_scale: f32,
    pub arrays: Vec<ArrayConfig>,
}

impl Config {
    pub fn parse(text: &str) -> std::result::Result<Config, String> {
        let root = json::parse(text)?;
        let number = |v: &Value, key: &str| match v.get(key) {
            Some(Value::Number(n)) => Ok(*n),
            _ => Err(format!("{key}: expected a number")),
        };
        let Some(Value::Array(layers)) = root.get("layers") else { return Err("layers: expected an array".into()) };
        let mut arrays = Vec::new();
        for a in layers {
            let Some(Value::Array(dilations)) = a.get("dilations") else { return Err("dilations: expected an array".into()) };
            arrays.push(ArrayConfig {
                input_size: number(a, "input_size")? as usize,
                condition_size: number(a, "condition_size")? as usize,
                channels: number(a, "channels")? as usize,
                head_size: number(a, "head_size")? as usize,
                kernel_size: number(a, "kernel_size")? as usize,
                dilations: dilations.iter().map(|d| if let Value::Number(n) = d { *n as usize } else { 0 }).collect(),
                head_bias: matches!(a.get("head_bias"), Some(Value::Bool(true))),
            });
        }
        Ok(Config { head_scale: number(&root, "head_scale")? as f32, arrays })
    }
}

/// Deliberate bugs, for the self-test (each is an engine option `perturb.<name>`).
#[derive(Default, Clone, Copy)]
pub struct Perturbations {
    /// Layer array 0, layer 1 convolves with dilation 3 instead of 2.
    pub dilation_off_by_one: bool,
    /// Every layer's state is zeroed at the start of each buffer instead of carried.
    pub state_not_carried: bool,
    /// The gate is tanh(a) * tanh(b) instead of tanh(a) * sigmoid(b).
    pub wrong_activation: bool,
}

struct Layer {
    dilation: usize,
    kernel: usize,
    conv_w: Vec<f32>, // [2C, C, k]
    conv_b: Vec<f32>, // [2C]
    mixer_w: Vec<f32>, // [2C, cond]
    one_w: Vec<f32>,  // [C, C]
    one_b: Vec<f32>,  // [C]
    /// The last `capacity` input columns per channel (room for a perturbed dilation too).
    history: Vec<Vec<f32>>,
}

struct LayerArray {
    cfg: ArrayConfig,
    rechannel_w: Vec<f32>, // [C, in]
    layers: Vec<Layer>,
    head_w: Vec<f32>, // [head, C]
    head_b: Vec<f32>, // [head] (zeros without head_bias)
}

pub struct WaveNet {
    head_scale: f32,
    arrays: Vec<LayerArray>,
}

type Probe<'a> = dyn FnMut(&str, &[f32], &[usize]) -> Result<()> + 'a;

impl WaveNet {
    pub fn load(path: &str, config: Config) -> Result<WaveNet> {
        let st = SafeTensors::open(path)?;
        match st.meta("config").map(Config::parse) {
            Some(Ok(stored)) if stored.arrays.len() == config.arrays.len() && stored.arrays.iter().zip(&config.arrays).all(|(a, b)| {
                a.channels == b.channels && a.dilations == b.dilations && a.kernel_size == b.kernel_size && a.head_size == b.head_size
            }) => {}
            _ => return Err(Error::format(format!("{path}: __metadata__.config is not the architecture this engine was built for (examples/nam/config.json)"))),
        }
        let mut arrays = Vec::new();
        for (i, cfg) in config.arrays.into_iter().enumerate() {
            let (c, k) = (cfg.channels, cfg.kernel_size);
            let mut layers = Vec::new();
            for (j, &d) in cfg.dilations.iter().enumerate() {
                let p = format!("arrays.{i}.layers.{j}");
                layers.push(Layer {
                    dilation: d,
                    kernel: k,
                    conv_w: st.f32_tensor(&format!("{p}.mix.conv.weight"), &[2 * c, c, k])?,
                    conv_b: st.f32_tensor(&format!("{p}.mix.conv.bias"), &[2 * c])?,
                    mixer_w: st.f32_tensor(&format!("{p}.mix.input_mixer.weight"), &[2 * c, cfg.condition_size, 1])?,
                    one_w: st.f32_tensor(&format!("{p}.one_by_one.weight"), &[c, c, 1])?,
                    one_b: st.f32_tensor(&format!("{p}.one_by_one.bias"), &[c])?,
                    history: vec![vec![0.0; (k - 1) * (d + 1)]; c],
                });
            }
            let head_b = if cfg.head_bias { st.f32_tensor(&format!("arrays.{i}.head_rechannel.bias"), &[cfg.head_size])? } else { vec![0.0; cfg.head_size] };
            arrays.push(LayerArray {
                rechannel_w: st.f32_tensor(&format!("arrays.{i}.rechannel.weight"), &[c, cfg.input_size, 1])?,
                head_w: st.f32_tensor(&format!("arrays.{i}.head_rechannel.weight"), &[cfg.head_size, c, 1])?,
                head_b,
                layers,
                cfg,
            });
        }
        Ok(WaveNet { head_scale: config.head_scale, arrays })
    }

    /// Silence before the first buffer.
    pub fn reset(&mut self) {
        for layer in self.arrays.iter_mut().flat_map(|a| a.layers.iter_mut()) {
            layer.history.iter_mut().for_each(|h| h.fill(0.0));
        }
    }

    /// One buffer of samples -> its output samples; the layers' history carries to the next buffer.
    pub fn process(&mut self, buffer: &[f32], bugs: Perturbations, probe: &mut Probe<'_>) -> Result<Vec<f32>> {
        if bugs.state_not_carried {
            self.reset();
        }
        let t = buffer.len();
        let mut x: Vec<f32> = buffer.to_vec(); // [input_size][T], input_size 1 for array 0
        let mut head: Option<Vec<f32>> = None;
        let mut states = Vec::new();
        for (i, array) in self.arrays.iter_mut().enumerate() {
            let (c, inputs) = (array.cfg.channels, array.cfg.input_size);
            x = matmul(&array.rechannel_w, None, &x, c, inputs, t);
            probe(&format!("wavenet.a{i}.rechannel"), &x, &[c, t])?;
            for (j, layer) in array.layers.iter_mut().enumerate() {
                let p = format!("wavenet.a{i}.l{j}");
                let dilation = if bugs.dilation_off_by_one && i == 0 && j == 1 { layer.dilation + 1 } else { layer.dilation };
                let z = layer.mix(&x, buffer, dilation, c, t);
                probe(&format!("{p}.z"), &z, &[2 * c, t])?;
                let act: Vec<f32> = (0..c * t).map(|e| {
                    let gate = if bugs.wrong_activation { z[c * t + e].tanh() } else { 1.0 / (1.0 + (-z[c * t + e]).exp()) };
                    z[e].tanh() * gate
                }).collect();
                probe(&format!("{p}.act"), &act, &[c, t])?;
                let mixed = matmul(&layer.one_w, Some(&layer.one_b), &act, c, c, t);
                let out: Vec<f32> = x.iter().zip(&mixed).map(|(a, b)| a + b).collect();
                probe(&format!("{p}.out"), &out, &[c, t])?;
                head = Some(match head { None => act, Some(h) => h.iter().zip(&act).map(|(a, b)| a + b).collect() });
                states.push((p, c, layer.push_history(&x, t)));
                x = out;
            }
            let h = matmul(&array.head_w, Some(&array.head_b), head.as_deref().unwrap_or(&[]), array.cfg.head_size, c, t);
            probe(&format!("wavenet.a{i}.head"), &h, &[array.cfg.head_size, t])?;
            head = Some(h);
        }
        let y: Vec<f32> = head.unwrap_or_default().iter().map(|v| self.head_scale * v).collect();
        probe("wavenet.out", &y, &[t])?;
        for (p, c, state) in states {
            probe(&format!("{p}.state"), &state, &[c, state.len() / c])?;
        }
        Ok(y)
    }
}

impl Layer {
    /// z[o][t] = bias[o] + sum_i sum_k W[o][i][k] * full[i][t + k*d - (k_max-1)*d] + mixer[o] * c[t],
    /// full = history ++ x: the causal dilated convolution of NAM (torch Conv1d without padding).
    fn mix(&self, x: &[f32], c: &[f32], dilation: usize, channels: usize, t: usize) -> Vec<f32> {
        let cap = self.history[0].len();
        let mut z = vec![0.0f32; 2 * channels * t];
        for o in 0..2 * channels {
            for s in 0..t {
                let mut acc = self.conv_b[o];
                for i in 0..channels {
                    for k in 0..self.kernel {
                        let back = (self.kernel - 1 - k) * dilation; // how far before sample s
                        let v = if back <= s { x[i * t + s - back] } else { self.history[i][cap + s - back] };
                        acc += self.conv_w[(o * channels + i) * self.kernel + k] * v;
                    }
                }
                z[o * t + s] = acc + self.mixer_w[o] * c[s];
            }
        }
        z
    }

    /// Appends the buffer to the history; returns the state the reference records: the last
    /// (kernel - 1) * dilation input columns, [C][H].
    fn push_history(&mut self, x: &[f32], t: usize) -> Vec<f32> {
        let h = (self.kernel - 1) * self.dilation;
        let mut state = Vec::with_capacity(self.history.len() * h);
        for (i, hist) in self.history.iter_mut().enumerate() {
            hist.extend_from_slice(&x[i * t..(i + 1) * t]);
            let cap = hist.len() - t;
            hist.drain(..hist.len() - cap);
            state.extend_from_slice(&hist[cap - h..]);
        }
        state
    }
}

/// out[o][t] = bias[o] + sum_i W[o][i] * x[i][t].
fn matmul(w: &[f32], bias: Option<&[f32]>, x: &[f32], outputs: usize, inputs: usize, t: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; outputs * t];
    for o in 0..outputs {
        for s in 0..t {
            let mut acc = bias.map_or(0.0, |b| b[o]);
            for i in 0..inputs {
                acc += w[o * inputs + i] * x[i * t + s];
            }
            out[o * t + s] = acc;
        }
    }
    out
}
