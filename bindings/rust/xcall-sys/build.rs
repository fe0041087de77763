//! Builds libxcall from the repository's src/ with the Makefile's flags, and a C table of
//! the header's layout (every struct's size, alignment, fields' offsets and sizes, every
//! XC_* constant) that the layout test compares with the Rust declarations. The table is
//! written from include/xcall.h itself, so a field added there shows up in it by name.
//!
//! The C sources: the repository's own (../../../src and include) when the crate is built
//! inside it, else the copy that `make rust-package` vendors into csrc/ before `cargo
//! package`, which is how a packaged crate carries them.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = [manifest.join("../../.."), manifest.join("csrc")]
        .into_iter()
        .find(|r| r.join("include/xcall.h").is_file() && r.join("src").is_dir())
        .unwrap_or_else(|| {
            panic!(
                "libxcall's C sources: neither {} (the repository) nor {} (vendored by `make \
                 rust-package`) holds include/xcall.h and src/",
                manifest.join("../../..").display(),
                manifest.join("csrc").display()
            )
        });
    let include = root.join("include");
    let src = root.join("src");
    let header = include.join("xcall.h");
    println!("cargo:rerun-if-changed={}", include.display());
    println!("cargo:rerun-if-changed={}", src.display());
    println!("cargo:rerun-if-changed=build.rs");

    // src/ holds a folder per layer (docs/layout.md), each its .c files
    let mut sources: Vec<PathBuf> = fs::read_dir(&src)
        .unwrap_or_else(|e| panic!("{}: {e}", src.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .flat_map(|dir| {
            fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .filter_map(|e| e.ok().map(|e| e.path()))
                .collect::<Vec<_>>()
        })
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    sources.sort();
    for s in &sources {
        println!("cargo:rerun-if-changed={}", s.display());
    }

    // the Makefile's XC_CFLAGS, less -fPIC (cc adds it) and the warnings
    let mut lib = base(&include, &src);
    lib.flag("-fvisibility=hidden").files(&sources);
    lib.compile("xcall");

    let text = fs::read_to_string(&header).unwrap_or_else(|e| panic!("{}: {e}", header.display()));
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets it"));
    let layout = out.join("xcall_layout.c");
    fs::write(&layout, layout_c(&text)).expect("write the layout table");
    fs::write(out.join("xc_stats.rs"), stats_rs(&text)).expect("write struct xc_stats");
    base(&include, &src).file(&layout).compile("xcall_layout");

    println!("cargo:rustc-link-lib=pthread");
    println!("cargo:include={}", include.display());
}

fn base(include: &Path, src: &Path) -> cc::Build {
    let mut b = cc::Build::new();
    // the Makefile's -O2 in every profile: tests run the library that ships
    b.opt_level(2)
        .std("c11")
        .define("_GNU_SOURCE", None)
        .flag("-pthread")
        .include(include)
        .include(src)
        .warnings(true)
        .extra_warnings(true)
        .flag("-Wshadow")
        .flag("-Wno-unused-parameter");
    b
}

/// The C table: one row per struct (size and alignment), per field (offset and size) and per
/// constant (value), each named as in the header.
fn layout_c(header: &str) -> String {
    let text = strip_comments(header);
    let mut c = String::from(
        "#include <xcall.h>\n#include <stddef.h>\n\n\
         struct xcsys_layout { const char *item, *field; long long a, b; };\n\
         const struct xcsys_layout xcsys_layout[] = {\n\
         \t{ \"cpu_set_t\", 0, sizeof(cpu_set_t), _Alignof(cpu_set_t) },\n",
    );
    for (name, fields) in structs(&text) {
        let t = format!("struct {name}");
        writeln!(c, "\t{{ \"{name}\", 0, sizeof({t}), _Alignof({t}) }},").unwrap();
        for f in fields {
            writeln!(c, "\t{{ \"{name}\", \"{f}\", offsetof({t}, {f}), sizeof((({t} *)0)->{f}) }},")
                .unwrap();
        }
    }
    for k in constants(&text) {
        writeln!(c, "\t{{ \"{k}\", \"#define\", (long long)({k}), 0 }},").unwrap();
    }
    c.push_str("\t{ 0, 0, 0, 0 }\n};\n");
    c
}

fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('/') {
        out.push_str(&rest[..i]);
        let r = &rest[i..];
        if let Some(body) = r.strip_prefix("/*") {
            rest = body.find("*/").map_or("", |j| &body[j + 2..]);
            out.push(' ');
        } else if r.starts_with("//") {
            rest = r.find('\n').map_or("", |j| &r[j..]);
        } else {
            out.push('/');
            rest = &r[1..];
        }
    }
    out.push_str(rest);
    out
}

/// Every `struct NAME { ... }` definition and its fields' names, in order.
fn structs(text: &str) -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("struct ") {
        rest = &rest[i + 7..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let after = rest[name.len()..].trim_start();
        if name.is_empty() || !after.starts_with('{') {
            continue;
        }
        let body_start = rest.len() - after.len() + 1;
        let mut depth = 1;
        let mut end = body_start;
        for (j, ch) in rest[body_start..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                end = body_start + j;
                break;
            }
        }
        let body = &rest[body_start..end];
        // a struct made by an X-macro list (struct xc_stats: XC_STATS_COUNTERS) has its fields there
        let fields = match body.trim().split_once('(') {
            Some((list, _)) if list.starts_with("XC_") && !body.contains(';') => x_list(text, list),
            _ => body.split(';').flat_map(declarators).collect(),
        };
        found.push((name, fields));
        rest = &rest[end..];
    }
    found
}

/// `struct xc_stats` in Rust, through the crate's `c_structs!`: one `u64` a counter of
/// `XC_STATS_COUNTERS`, in its order, its meaning (the list's last argument) as its doc.
fn stats_rs(text: &str) -> String {
    let mut s = String::from(
        "c_structs! {\n    STATS_LAYOUTS;\n    /// `struct xc_stats`: counters, per CPU or summed \
         (`XC_STATS_COUNTERS` in `xcall.h`).\n    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]\n    \
         pub struct xc_stats {\n",
    );
    for (name, meaning) in x_list_meanings(text, "XC_STATS_COUNTERS") {
        let mut doc = meaning.replace('\\', "");
        if let Some(first) = doc.get(..1) {
            doc = first.to_uppercase() + &doc[1..];
        }
        s += &format!("        /// {doc}.\n        pub {name}: u64,\n");
    }
    s + "    }\n}\n"
}

/// Each `X(name, ..., "meaning")` line of the header's `#define LIST(X)`: its name and meaning.
fn x_list_meanings(text: &str, list: &str) -> Vec<(String, String)> {
    let head = format!("#define {list}(X)");
    let start = text.find(&head).unwrap_or_else(|| panic!("xcall.h defines no {list}"));
    let mut out = Vec::new();
    for line in text[start + head.len()..].lines() {
        let l = line.trim();
        if let Some(args) = l.strip_prefix("X(") {
            let name: String = args.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            let meaning = match (args.find('"'), args.rfind('"')) {
                (Some(a), Some(b)) if b > a => args[a + 1..b].to_string(),
                _ => panic!("xcall.h: {list}'s line for {name} has no meaning in quotes"),
            };
            out.push((name, meaning));
        }
        if !l.ends_with('\\') && !l.is_empty() {
            break;
        }
    }
    out
}

/// The first argument of each `X(...)` line of the header's `#define LIST(X)`, in order.
fn x_list(text: &str, list: &str) -> Vec<String> {
    let head = format!("#define {list}(X)");
    let Some(start) = text.find(&head) else {
        panic!("xcall.h: a struct made by {list}, which it does not define");
    };
    let mut names = Vec::new();
    for line in text[start + head.len()..].lines() {
        let l = line.trim();
        if let Some(args) = l.strip_prefix("X(") {
            let name: String = args.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            names.push(name);
        }
        if !l.ends_with('\\') && !l.is_empty() {
            break;
        }
    }
    names
}

/// The names one declaration declares: `uint64_t a, b` gives a and b; `int (*f)(int, void *)` f.
fn declarators(decl: &str) -> Vec<String> {
    let decl = decl.trim();
    if decl.is_empty() {
        return Vec::new();
    }
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, ch) in decl.char_indices() {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&decl[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&decl[start..]);
    parts
        .into_iter()
        .map(|p| {
            if let Some(i) = p.find("(*") {
                let n = &p[i + 2..];
                return n[..n.find(')').unwrap_or(n.len())].trim().to_string();
            }
            let p = p.split('[').next().unwrap_or(p);
            let p = p.split(':').next().unwrap_or(p);
            p.rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .find(|t| !t.is_empty())
                .unwrap_or("")
                .to_string()
        })
        .filter(|n| !n.is_empty())
        .collect()
}

/// Every `#define XC_NAME value` that is a number (flags, policies), not a macro of the header's own.
fn constants(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("#define "))
        .filter_map(|l| {
            let name: String = l
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let value = l[name.len()..].trim();
            let function_like = l[name.len()..].starts_with('(');
            (name.starts_with("XC_") && !function_like && !value.is_empty() && !value.starts_with("__"))
                .then_some(name)
        })
        .collect()
}
