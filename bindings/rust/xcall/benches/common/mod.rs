//! What the benches share: their command line, a quantile, a JSON string.
#![allow(dead_code)]

/// `--blocks N` and `--json FILE` (cargo bench's own `--bench` is passed over); any other
/// argument is refused with the usage line and exit status 2.
pub fn args(name: &str, blocks: usize, json: &str) -> (usize, String) {
    let args: Vec<String> = std::env::args().collect();
    let (mut blocks, mut json) = (blocks, json.to_string());
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--blocks" if i + 1 < args.len() => {
                blocks = args[i + 1].parse().unwrap_or(blocks).max(1);
                i += 1;
            }
            "--json" if i + 1 < args.len() => {
                json = args[i + 1].clone();
                i += 1;
            }
            "--bench" => {} // cargo bench passes it
            a => {
                eprintln!("{name}: unknown argument {a}; usage: {name} [--blocks N] [--json FILE]");
                std::process::exit(2);
            }
        }
        i += 1;
    }
    (blocks, json)
}

/// The q-quantile of sorted samples, interpolated between the two nearest.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// @s as a JSON string, quotes, backslashes and control characters escaped.
pub fn json_str(s: &str) -> String {
    use std::fmt::Write;
    let mut o = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}
