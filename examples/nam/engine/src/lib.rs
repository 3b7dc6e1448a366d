//! The NAM WaveNet example engine (examples/nam): wavenet.rs is the model; this file is all of
//! its trace ABI glue, on the trace-inspector-abi crate. One pass = one audio buffer.
mod wavenet;

use trace_inspector_abi::{export_engine, Catalogue, DType, Dim, Engine, Error, OptionKind, Pass, Result};
use wavenet::{Config, Perturbations, WaveNet, CONFIG_JSON};

const PERTURBATIONS: [(&str, &str); 3] = [
    ("perturb.dilation_off_by_one", "layer array 0, layer 1 convolves with dilation 3 instead of 2"),
    ("perturb.state_not_carried", "every layer's state is zeroed at the start of each buffer"),
    ("perturb.wrong_activation", "the gate is tanh(a) * tanh(b) instead of tanh(a) * sigmoid(b)"),
];

fn config() -> Config {
    Config::parse(CONFIG_JSON).expect("examples/nam/config.json is compiled in and valid")
}

struct Nam {
    net: WaveNet,
}

impl Engine for Nam {
    fn catalogue() -> Catalogue {
        let mut cat = Catalogue::new("nam-wavenet-rust", env!("CARGO_PKG_VERSION"), "examples/nam");
        cat.model_json = format!("{{\"sample_rate\":48000,\"config\":{CONFIG_JSON}}}");
        cat.input("audio_in", DType::F32, &[Dim::sym("N")], true, "mono input at 48 kHz");
        cat.input("buffer_lengths", DType::I32, &[Dim::sym("P")], true, "samples in each pass's buffer");
        let (t, cfg) = (Dim::sym("T"), config());
        let mut states = Vec::new();
        for (i, a) in cfg.arrays.iter().enumerate() {
            let c = a.channels as i64;
            cat.boundary(&format!("wavenet.a{i}.rechannel"), DType::F32, &[c.into(), t.clone()], "input rechannelled (1x1)");
            for (j, d) in a.dilations.iter().enumerate() {
                let p = format!("wavenet.a{i}.l{j}");
                cat.boundary(&format!("{p}.z"), DType::F32, &[(2 * c).into(), t.clone()], "dilated conv + condition mixer");
                cat.boundary(&format!("{p}.act"), DType::F32, &[c.into(), t.clone()], "tanh(z[:C]) * sigmoid(z[C:])");
                cat.boundary(&format!("{p}.out"), DType::F32, &[c.into(), t.clone()], "x + 1x1(act)");
                states.push((format!("{p}.state"), c, ((a.kernel_size - 1) * d) as i64));
            }
            cat.boundary(&format!("wavenet.a{i}.head"), DType::F32, &[(a.head_size as i64).into(), t.clone()], "head 1x1 of the summed activations");
        }
        cat.boundary("wavenet.out", DType::F32, &[t.clone()], "output samples (head_scale * head)");
        for (name, c, h) in states {
            cat.boundary(&name, DType::F32, &[c.into(), h.into()], "the layer's input history carried to the next buffer");
        }
        for (name, doc) in PERTURBATIONS {
            cat.option(name, OptionKind::Bool(false), doc);
        }
        cat
    }

    fn open(_config: &str, weights: Option<&str>) -> Result<Self> {
        let path = weights.ok_or_else(|| Error::invalid("the NAM engine needs its weights file (safetensors)"))?;
        let mut net = WaveNet::load(path, config())?;
        net.reset();
        Ok(Nam { net })
    }

    fn pass(&mut self, pass: &mut Pass<'_>) -> Result<()> {
        let lengths = pass.input::<i32>("buffer_lengths")?.data.to_vec();
        let index = pass.index() as usize;
        let start: usize = lengths.iter().take(index).map(|&n| n.max(0) as usize).sum();
        let length = *lengths.get(index).ok_or_else(|| Error::state(format!("pass {index}: buffer_lengths has {} buffers", lengths.len())))?;
        let audio = pass.input::<f32>("audio_in")?.data.get(start..start + length.max(0) as usize).map(<[f32]>::to_vec);
        let buffer = audio.ok_or_else(|| Error::shape(format!("pass {index}: audio_in ends before buffer {start}+{length}")))?;
        let [dilation_off_by_one, state_not_carried, wrong_activation] = PERTURBATIONS.map(|(name, _)| pass.option_bool(name));
        let bugs = Perturbations { dilation_off_by_one, state_not_carried, wrong_activation };
        let mut probe = |name: &str, data: &[f32], shape: &[usize]| pass.emit(name, data, &shape.iter().map(|&n| n as i64).collect::<Vec<_>>());
        self.net.process(&buffer, bugs, &mut probe).map(|_| ())
    }

    fn reset(&mut self) -> Result<()> {
        self.net.reset();
        Ok(())
    }
}

export_engine!(Nam);
