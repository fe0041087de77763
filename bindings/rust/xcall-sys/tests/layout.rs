//! The Rust declarations against the header: every struct of `xcall.h` (its size, alignment,
//! each field's offset and size, by name, both ways) and every numeric `XC_*` constant, read
//! from a table that the build script compiled from the header itself.

use std::collections::BTreeMap;
use std::ffi::CStr;
use xcall_sys::{CLayoutRow, CONSTANTS, LAYOUTS, SHARED_ROOM};

/// (item, field) -> (a, b), as C sees it; field "" is the struct itself.
fn c_table() -> BTreeMap<(String, String), (i64, i64)> {
    let mut t = BTreeMap::new();
    // SAFETY: the table is a static array that the build script ends with a NULL item.
    let mut row: *const CLayoutRow = unsafe { xcall_sys::xcsys_layout.as_ptr() };
    loop {
        // SAFETY: row stays within the table: it stops at the NULL item, which is its last row.
        let r = unsafe { &*row };
        if r.item.is_null() {
            break;
        }
        // SAFETY: item and field are NULL or string literals of the table.
        let item = unsafe { CStr::from_ptr(r.item) }.to_str().unwrap().to_string();
        let field = if r.field.is_null() {
            String::new()
        } else {
            // SAFETY: as above.
            unsafe { CStr::from_ptr(r.field) }.to_str().unwrap().to_string()
        };
        t.insert((item, field), (r.a, r.b));
        // SAFETY: the NULL row has not been reached, so the next one is in the table.
        row = unsafe { row.add(1) };
    }
    t
}

/// A C field's name as the Rust declaration spells it (`fn` is a keyword there: `fn_`).
fn c_name(rust: &str) -> &str {
    rust.strip_suffix('_').unwrap_or(rust)
}

#[test]
fn structs_match_the_header() {
    let c = c_table();
    let mut wrong = Vec::new();
    let c_structs: Vec<&String> = c
        .keys()
        .filter(|(item, field)| field.is_empty() && item != "cpu_set_t")
        .map(|(item, _)| item)
        .collect();
    for s in &c_structs {
        if !LAYOUTS.iter().flat_map(|l| l.iter()).any(|l| l.name == s.as_str()) {
            wrong.push(format!("struct {s} is in xcall.h, not in xcall-sys"));
        }
    }
    for l in LAYOUTS.iter().flat_map(|l| l.iter()) {
        let Some(&(size, align)) = c.get(&(l.name.to_string(), String::new())) else {
            wrong.push(format!("struct {} is in xcall-sys, not in xcall.h", l.name));
            continue;
        };
        if (size, align) != (l.size as i64, l.align as i64) {
            wrong.push(format!(
                "struct {}: C size {size} align {align}, Rust size {} align {}",
                l.name, l.size, l.align
            ));
        }
        for ((item, field), &(off, fsize)) in &c {
            if item == l.name && !field.is_empty() && field != "#define"
                && !l.fields.iter().any(|f| c_name(f.name) == field)
            {
                // a private member in a union with a declared one: the same room
                let shared = SHARED_ROOM.iter().find(|(s, m, _)| *s == l.name && m == field);
                match shared.and_then(|(_, _, with)| c.get(&(l.name.to_string(), with.to_string()))) {
                    Some(&room) if room == (off, fsize) => {}
                    Some(&room) => wrong.push(format!(
                        "{}.{field}: C offset {off} size {fsize}, not the room {room:?} of {}",
                        l.name,
                        shared.map_or("", |s| s.2)
                    )),
                    None => wrong.push(format!("{}.{field} is in xcall.h, not in xcall-sys", l.name)),
                }
            }
        }
        for f in l.fields {
            match c.get(&(l.name.to_string(), c_name(f.name).to_string())) {
                None => wrong.push(format!("{}.{} is in xcall-sys, not in xcall.h", l.name, f.name)),
                Some(&(off, fsize)) if (off, fsize) != (f.offset as i64, f.size as i64) => {
                    wrong.push(format!(
                        "{}.{}: C offset {off} size {fsize}, Rust offset {} size {}",
                        l.name, f.name, f.offset, f.size
                    ))
                }
                Some(_) => {}
            }
        }
    }
    let set = c[&("cpu_set_t".to_string(), String::new())];
    let rust_set = (
        std::mem::size_of::<libc::cpu_set_t>() as i64,
        std::mem::align_of::<libc::cpu_set_t>() as i64,
    );
    if set != rust_set {
        wrong.push(format!("cpu_set_t: C {set:?}, Rust {rust_set:?}"));
    }
    assert!(c_structs.len() >= 6, "the table lists too few structs: {c_structs:?}");
    assert_eq!(c[&("xc_call".to_string(), String::new())].0, 64, "struct xc_call is one cache line");
    assert!(wrong.is_empty(), "xcall-sys does not follow xcall.h:\n{}", wrong.join("\n"));
}

#[test]
fn constants_match_the_header() {
    let c = c_table();
    let mut wrong = Vec::new();
    let c_consts: Vec<(&String, i64)> = c
        .iter()
        .filter(|((_, field), _)| field == "#define")
        .map(|((item, _), &(v, _))| (item, v))
        .collect();
    for (name, v) in &c_consts {
        match CONSTANTS.iter().find(|(n, _)| n == name) {
            None => wrong.push(format!("{name} is in xcall.h, not in xcall-sys")),
            Some(&(_, r)) if r != *v => wrong.push(format!("{name}: C {v}, Rust {r}")),
            Some(_) => {}
        }
    }
    for (name, _) in CONSTANTS {
        if !c_consts.iter().any(|(n, _)| n == name) {
            wrong.push(format!("{name} is in xcall-sys, not in xcall.h"));
        }
    }
    assert!(c_consts.len() >= 8, "the table lists too few constants: {c_consts:?}");
    assert!(wrong.is_empty(), "xcall-sys does not follow xcall.h:\n{}", wrong.join("\n"));
}
