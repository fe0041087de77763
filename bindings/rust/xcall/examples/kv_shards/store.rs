//! One shard's part of the store, and the commands on one key that run there, each writing
//! its RESP reply into the caller's buffer (no allocation but the map's own).

use std::collections::HashMap;

/// One shard's keys: the instance each mode keeps per shard (a `Sharded` instance, a
/// `Mutex`, a thread's own).
#[derive(Default)]
pub struct Store {
    map: HashMap<Vec<u8>, Vec<u8>>,
    /// INCRs that succeeded, and commands run: the checks compare them with what clients sent
    pub incrs: u64,
    pub ops: u64,
}

/// A command on one key, run by the key's owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Get,
    Set,
    Incr,
    /// one key of a `DEL`: `:1` when it was there
    Del,
    /// one key of an `EXISTS`: `:1` when it is there
    Exists,
}

impl Op {
    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(c: u8) -> Option<Op> {
        [Op::Get, Op::Set, Op::Incr, Op::Del, Op::Exists].into_iter().find(|o| o.code() == c)
    }
}

impl Store {
    /// Run `op` on `key` (`val` is SET's value) and append its reply to `out`.
    pub fn exec(&mut self, op: Op, key: &[u8], val: &[u8], out: &mut Vec<u8>) {
        self.ops += 1;
        match op {
            Op::Get => match self.map.get(key) {
                Some(v) => bulk(out, v),
                None => out.extend_from_slice(b"$-1\r\n"),
            },
            Op::Set => {
                match self.map.get_mut(key) {
                    // the value's buffer reused: no allocation for a key set again
                    Some(v) => {
                        v.clear();
                        v.extend_from_slice(val);
                    }
                    None => {
                        self.map.insert(key.to_vec(), val.to_vec());
                    }
                }
                out.extend_from_slice(b"+OK\r\n");
            }
            Op::Incr => {
                // one lookup for a key that is there (the common case), its buffer reused
                let mut digits = [0u8; 20];
                let text = match self.map.get_mut(key) {
                    Some(v) => {
                        let Some(old) = parse_i64(v) else {
                            out.extend_from_slice(b"-ERR value is not an integer or out of range\r\n");
                            return;
                        };
                        let Some(new) = old.checked_add(1) else {
                            out.extend_from_slice(b"-ERR increment or decrement would overflow\r\n");
                            return;
                        };
                        let text = format_i64(new, &mut digits);
                        v.clear();
                        v.extend_from_slice(text);
                        text
                    }
                    None => {
                        self.map.insert(key.to_vec(), b"1".to_vec());
                        b"1"
                    }
                };
                self.incrs += 1;
                out.push(b':');
                out.extend_from_slice(text);
                out.extend_from_slice(b"\r\n");
            }
            Op::Del => int(out, i64::from(self.map.remove(key).is_some())),
            Op::Exists => int(out, i64::from(self.map.contains_key(key))),
        }
    }
}

/// `$len\r\nv\r\n`
pub fn bulk(out: &mut Vec<u8>, v: &[u8]) {
    let mut digits = [0u8; 20];
    out.push(b'$');
    out.extend_from_slice(format_i64(v.len() as i64, &mut digits));
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(v);
    out.extend_from_slice(b"\r\n");
}

/// `:n\r\n`
pub fn int(out: &mut Vec<u8>, n: i64) {
    let mut digits = [0u8; 20];
    out.push(b':');
    out.extend_from_slice(format_i64(n, &mut digits));
    out.extend_from_slice(b"\r\n");
}

/// `n` in decimal, in `buf`.
pub fn format_i64(n: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    let mut m = n.unsigned_abs();
    loop {
        at -= 1;
        buf[at] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    if n < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
}

/// A value as Redis reads an integer (`string2ll`): an optional `-`, then digits with no
/// leading zero ("0" alone aside), no sign `+`, no spaces, within `i64`.
pub fn parse_i64(v: &[u8]) -> Option<i64> {
    let (neg, digits) = match v {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, v),
    };
    match digits {
        [b'0'] if !neg => return Some(0),
        [b'1'..=b'9', ..] if digits.len() <= 19 => {}
        _ => return None,
    }
    let mut m: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        m = m.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    if neg {
        0i64.checked_sub_unsigned(m)
    } else {
        i64::try_from(m).ok()
    }
}

#[test]
fn integers_as_redis_reads_and_writes_them() {
    for (text, want) in [
        (&b"0"[..], Some(0)),
        (b"7", Some(7)),
        (b"-12", Some(-12)),
        (b"9223372036854775807", Some(i64::MAX)),
        (b"-9223372036854775808", Some(i64::MIN)),
        (b"9223372036854775808", None),
        (b"-9223372036854775809", None),
        (b"", None),
        (b"-", None),
        (b"-0", None),
        (b"01", None),
        (b"+1", None),
        (b" 1", None),
        (b"1 ", None),
        (b"1x", None),
        (b"99999999999999999999", None),
    ] {
        assert_eq!(parse_i64(text), want, "{:?}", String::from_utf8_lossy(text));
    }
    for n in [0, 1, -1, 42, i64::MAX, i64::MIN] {
        let mut b = [0; 20];
        assert_eq!(format_i64(n, &mut b), n.to_string().as_bytes());
    }
}

#[test]
fn commands_reply_as_redis_does() {
    let mut s = Store::default();
    let mut out = Vec::new();
    let mut run = |s: &mut Store, op, k: &[u8], v: &[u8]| {
        out.clear();
        s.exec(op, k, v, &mut out);
        String::from_utf8(out.clone()).unwrap()
    };
    assert_eq!(run(&mut s, Op::Get, b"k", b""), "$-1\r\n");
    assert_eq!(run(&mut s, Op::Incr, b"k", b""), ":1\r\n");
    assert_eq!(run(&mut s, Op::Incr, b"k", b""), ":2\r\n");
    assert_eq!(run(&mut s, Op::Get, b"k", b""), "$1\r\n2\r\n");
    assert_eq!(run(&mut s, Op::Set, b"k", b"a b\r\n"), "+OK\r\n");
    assert_eq!(run(&mut s, Op::Get, b"k", b""), "$5\r\na b\r\n\r\n");
    assert_eq!(run(&mut s, Op::Incr, b"k", b""), "-ERR value is not an integer or out of range\r\n");
    assert_eq!(run(&mut s, Op::Set, b"k", b"9223372036854775807"), "+OK\r\n");
    assert_eq!(run(&mut s, Op::Incr, b"k", b""), "-ERR increment or decrement would overflow\r\n");
    assert_eq!(run(&mut s, Op::Exists, b"k", b""), ":1\r\n");
    assert_eq!(run(&mut s, Op::Del, b"k", b""), ":1\r\n");
    assert_eq!(run(&mut s, Op::Del, b"k", b""), ":0\r\n");
    assert_eq!(run(&mut s, Op::Exists, b"k", b""), ":0\r\n");
    assert_eq!((s.incrs, s.ops), (2, 13));
}
