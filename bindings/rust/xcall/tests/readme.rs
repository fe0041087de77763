//! Every `rust` block of the READMEs (the repository's and bindings/rust's) is, whole, one of
//! the files of `examples/`, which clippy lints and `cargo test` runs (as doc-tests: the crate
//! docs include each README example); a block pasted into a README by hand fails here, naming
//! its file and line.

use std::fs;
use std::path::Path;

/// (line, info string, text) of each fenced block of `md`.
fn blocks(md: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, String, String)> = None;
    for (n, line) in md.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(info)) => open = Some((n + 1, info.trim().to_string(), String::new())),
            (Some(_), Some(_)) => out.push(open.take().unwrap()),
            (Some((_, _, text)), None) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

#[test]
fn readme_rust_blocks_are_examples() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut examples = Vec::new();
    for e in fs::read_dir(crate_dir.join("examples")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "rs") {
            examples.push((p.file_name().unwrap().to_string_lossy().into_owned(), fs::read_to_string(&p).unwrap()));
        }
    }
    let docs: String = fs::read_dir(crate_dir.join("src"))
        .unwrap()
        .map(|e| fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    let mut wrong = Vec::new();
    let mut shown = 0;
    for readme in ["../README.md", "../../../README.md"] {
        let path = crate_dir.join(readme);
        let md = fs::read_to_string(&path).unwrap();
        for (line, info, text) in blocks(&md) {
            if info.split(',').next() != Some("rust") {
                continue;
            }
            match examples.iter().find(|(_, body)| *body == text) {
                None => wrong.push(format!(
                    "{}:{line}: a rust block that is not one of xcall/examples/*.rs, whole",
                    path.display()
                )),
                Some((name, _)) => {
                    shown += 1;
                    let include = format!("include_str!(\"../examples/{name}\")");
                    if !docs.contains(&include) {
                        wrong.push(format!("{}:{line}: examples/{name} is not in the crate docs", path.display()));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(shown >= 1, "the READMEs show no example");
}

#[test]
fn the_check_catches_a_pasted_block() {
    let md = "text\n```rust\nlet x = 1;\n```\n```sh\nls\n```\n";
    let b = blocks(md);
    assert_eq!(b.len(), 2);
    assert_eq!((b[0].0, b[0].1.as_str(), b[0].2.as_str()), (2, "rust", "let x = 1;\n"));
    assert_eq!(b[1].1, "sh");
}
