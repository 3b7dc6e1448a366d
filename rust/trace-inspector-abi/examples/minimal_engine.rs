//! engine/examples/minimal_engine.c in Rust with trace-inspector-abi: one input x (f32 [N]);
//! prefill computes y = 2x and its sum, every decode y = y + 1 and its sum. Unlike the C toy,
//! toy.y accepts injection (the injected state flows into the sum and the next pass). The option
//! `debug.panic_in_pass` makes a pass panic, to show a panic becomes an error status.
use trace_inspector_abi::{export_engine, Catalogue, DType, Dim, Engine, OptionKind, Pass, Result};

struct Minimal {
    y: Vec<f32>,
}

impl Engine for Minimal {
    fn catalogue() -> Catalogue {
        let mut c = Catalogue::new("minimal-example-rust", "1.0.0", "example");
        c.input("x", DType::F32, &[Dim::sym("N")], true, "input vector");
        let y = c.boundary("toy.y", DType::F32, &[Dim::sym("N")], "state");
        y.stage = "toy".into();
        y.injectable = true;
        c.boundary("toy.sum", DType::F32, &[Dim::Fixed(1)], "sum of the state");
        c.option("debug.panic_in_pass", OptionKind::Bool(false), "panic inside the pass (shows the FFI guard)");
        c
    }

    fn open(_config: &str, _weights: Option<&str>) -> Result<Self> {
        Ok(Minimal { y: Vec::new() })
    }

    fn pass(&mut self, pass: &mut Pass<'_>) -> Result<()> {
        if pass.option_bool("debug.panic_in_pass") {
            let empty: Vec<f32> = Vec::new();
            let _ = empty[pass.index() as usize + 3]; // an out-of-bounds index: a panic
        }
        let (scale, offset) = if pass.index() == 0 {
            self.y = pass.input::<f32>("x")?.data.to_vec();
            (2.0, 0.0)
        } else {
            (1.0, 1.0)
        };
        for v in self.y.iter_mut() {
            *v = *v * scale + offset;
        }
        let n = self.y.len() as i64;
        pass.emit_injectable("toy.y", &mut self.y, &[n])?; // records y, then takes an injected one
        let sum: f32 = self.y.iter().sum(); // from what flows on
        pass.emit("toy.sum", &[sum], &[1])
    }
}

export_engine!(Minimal);
