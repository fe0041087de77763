//! The server's side of RESP: a request's words found in the connection's buffer (ranges,
//! nothing copied), and what they ask, by command.

use crate::store::{bulk, Op};
use std::ops::Range;

/// What the front of a buffer holds.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    /// not a whole request yet
    Incomplete,
    /// a request of this many bytes, its words in the vector passed
    Request(usize),
    /// an empty inline line of this many bytes: no request, no reply
    Nothing(usize),
    /// a protocol error: an `-ERR` and the connection closed after it, as Redis does
    Error(&'static str),
}

/// Bulk strings and multibulk counts are refused past Redis's own limits.
const MAX_BULK: usize = 512 * 1024 * 1024;
const MAX_WORDS: usize = 1024 * 1024;
const MAX_INLINE: usize = 64 * 1024;

/// One request from the front of `buf`: RESP arrays of bulk strings, or an inline line of
/// words separated by spaces. `words` gets each word's range in `buf`.
pub fn parse(buf: &[u8], words: &mut Vec<Range<usize>>) -> Parsed {
    words.clear();
    let Some(&first) = buf.first() else { return Parsed::Incomplete };
    if first != b'*' {
        let Some(nl) = buf.iter().position(|&b| b == b'\n') else {
            return if buf.len() > MAX_INLINE { Parsed::Error("Protocol error: too big inline request") } else { Parsed::Incomplete };
        };
        let end = if nl > 0 && buf[nl - 1] == b'\r' { nl - 1 } else { nl };
        let mut at = 0;
        while at < end {
            while at < end && buf[at].is_ascii_whitespace() {
                at += 1;
            }
            let start = at;
            while at < end && !buf[at].is_ascii_whitespace() {
                at += 1;
            }
            if start < at {
                words.push(start..at);
            }
        }
        return if words.is_empty() { Parsed::Nothing(nl + 1) } else { Parsed::Request(nl + 1) };
    }
    let Some((n, mut at)) = number(buf, 1) else { return Parsed::Incomplete };
    let Ok(n) = n else { return Parsed::Error("Protocol error: invalid multibulk length") };
    if n > MAX_WORDS as i64 {
        return Parsed::Error("Protocol error: invalid multibulk length");
    }
    if n <= 0 {
        // `*0` and `*-1` are no request (Redis skips them)
        return Parsed::Nothing(at);
    }
    for _ in 0..n {
        match buf.get(at) {
            None => return Parsed::Incomplete,
            Some(b'$') => {}
            Some(_) => return Parsed::Error("Protocol error: expected '$'"),
        }
        let Some((len, start)) = number(buf, at + 1) else { return Parsed::Incomplete };
        let len = match len {
            Ok(l) if (0..=MAX_BULK as i64).contains(&l) => l as usize,
            _ => return Parsed::Error("Protocol error: invalid bulk length"),
        };
        let end = start + len;
        if buf.len() < end + 2 {
            return Parsed::Incomplete;
        }
        if &buf[end..end + 2] != b"\r\n" {
            return Parsed::Error("Protocol error: bad bulk string end");
        }
        words.push(start..end);
        at = end + 2;
    }
    Parsed::Request(at)
}

/// The decimal number of the line at `at` and where the next line starts; `None` while the
/// line is incomplete, `Some(Err)` for one that is not a number.
fn number(buf: &[u8], at: usize) -> Option<(Result<i64, ()>, usize)> {
    let rest = buf.get(at..)?;
    let Some(cr) = rest.iter().position(|&b| b == b'\r') else {
        // a length line is short: one that runs on without its end is no number
        return if rest.len() > 32 { Some((Err(()), 0)) } else { None };
    };
    rest.get(cr + 1)?;
    let n = if rest[cr + 1] == b'\n' { crate::store::parse_i64(&rest[..cr]).ok_or(()) } else { Err(()) };
    Some((n, at + cr + 2))
}

/// What a request asks.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    /// answered at once: the reply is in the buffer passed
    Now,
    /// one command on one key (`words[1]`, SET's value `words[2]`), run by its owner
    One(Op),
    /// one op on each key of `words[1..]`, run by each key's owner, the integer replies
    /// summed (`DEL`, `EXISTS`)
    Each(Op),
}

/// The command `words` name (ranges of `buf`), with a reply known at once written to `now`.
pub fn command(buf: &[u8], words: &[Range<usize>], now: &mut Vec<u8>) -> Command {
    let word = |i: usize| &buf[words[i].clone()];
    let name = word(0);
    let n = words.len();
    let is = |s: &str| name.eq_ignore_ascii_case(s.as_bytes());
    let wrong = |now: &mut Vec<u8>, c: &str| {
        now.extend_from_slice(b"-ERR wrong number of arguments for '");
        now.extend_from_slice(c.as_bytes());
        now.extend_from_slice(b"' command\r\n");
        Command::Now
    };
    if is("GET") {
        return if n == 2 { Command::One(Op::Get) } else { wrong(now, "get") };
    }
    if is("SET") {
        return match n {
            3 => Command::One(Op::Set),
            4.. => {
                now.extend_from_slice(b"-ERR syntax error\r\n");
                Command::Now
            }
            _ => wrong(now, "set"),
        };
    }
    if is("INCR") {
        return if n == 2 { Command::One(Op::Incr) } else { wrong(now, "incr") };
    }
    if is("DEL") {
        return if n >= 2 { Command::Each(Op::Del) } else { wrong(now, "del") };
    }
    if is("EXISTS") {
        return if n >= 2 { Command::Each(Op::Exists) } else { wrong(now, "exists") };
    }
    if is("PING") {
        match n {
            1 => now.extend_from_slice(b"+PONG\r\n"),
            2 => bulk(now, word(1)),
            _ => return wrong(now, "ping"),
        }
        return Command::Now;
    }
    if is("ECHO") {
        if n != 2 {
            return wrong(now, "echo");
        }
        bulk(now, word(1));
        return Command::Now;
    }
    if is("CONFIG") && n >= 3 && word(1).eq_ignore_ascii_case(b"GET") {
        // what redis-benchmark asks, answered as a redis-server that saves nothing
        let mut pairs: Vec<(&[u8], &[u8])> = Vec::new();
        for i in 2..n {
            if word(i).eq_ignore_ascii_case(b"save") {
                pairs.push((b"save", b""));
            } else if word(i).eq_ignore_ascii_case(b"appendonly") {
                pairs.push((b"appendonly", b"no"));
            }
        }
        now.push(b'*');
        now.extend_from_slice((2 * pairs.len()).to_string().as_bytes());
        now.extend_from_slice(b"\r\n");
        for (k, v) in pairs {
            bulk(now, k);
            bulk(now, v);
        }
        return Command::Now;
    }
    now.extend_from_slice(b"-ERR unknown command '");
    now.extend(String::from_utf8_lossy(name).chars().filter(|c| !c.is_control()).take(64).collect::<String>().bytes());
    now.extend_from_slice(b"'\r\n");
    Command::Now
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words_of(buf: &[u8]) -> (Parsed, Vec<Vec<u8>>) {
        let mut w = Vec::new();
        let p = parse(buf, &mut w);
        (p, w.into_iter().map(|r| buf[r].to_vec()).collect())
    }

    #[test]
    fn requests_as_redis_reads_them() {
        let v = |s: &[&str]| s.iter().map(|w| w.as_bytes().to_vec()).collect::<Vec<_>>();
        assert_eq!(words_of(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), (Parsed::Request(20), v(&["GET", "k"])));
        assert_eq!(words_of(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1"), (Parsed::Request(20), v(&["GET", "k"])));
        assert_eq!(words_of(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\na\r\nb\r\n").1, v(&["SET", "k", "a\r\nb"]));
        assert_eq!(words_of(b"*3\r\n$3\r\nSET\r\n$0\r\n\r\n$0\r\n\r\n").1, v(&["SET", "", ""]));
        for cut in 1..20 {
            assert_eq!(words_of(&b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"[..cut]).0, Parsed::Incomplete, "cut {cut}");
        }
        assert_eq!(words_of(b"  SET  a   b \r\nGET a\n"), (Parsed::Request(15), v(&["SET", "a", "b"])));
        assert_eq!(words_of(b"GET a\n"), (Parsed::Request(6), v(&["GET", "a"])));
        assert_eq!(words_of(b"  \r\nPING\r\n"), (Parsed::Nothing(4), vec![]));
        assert_eq!(words_of(b"*0\r\n"), (Parsed::Nothing(4), vec![]));
        assert_eq!(words_of(b"PING"), (Parsed::Incomplete, vec![]));
        assert_eq!(words_of(b"*x\r\n").0, Parsed::Error("Protocol error: invalid multibulk length"));
        assert_eq!(words_of(b"*2000000\r\n").0, Parsed::Error("Protocol error: invalid multibulk length"));
        assert_eq!(words_of(b"*1\r\n:3\r\n").0, Parsed::Error("Protocol error: expected '$'"));
        assert_eq!(words_of(b"*1\r\n$-1\r\n").0, Parsed::Error("Protocol error: invalid bulk length"));
        assert_eq!(words_of(b"*1\r\n$99999999999\r\n").0, Parsed::Error("Protocol error: invalid bulk length"));
        assert_eq!(words_of(b"*1\r\n$1\r\nab\r\n").0, Parsed::Error("Protocol error: bad bulk string end"));
        assert_eq!(words_of(b"*1\r\n$1x\r\n").0, Parsed::Error("Protocol error: invalid bulk length"));
        assert_eq!(words_of(&[b'*'; 40]).0, Parsed::Error("Protocol error: invalid multibulk length"));
        assert_eq!(words_of(&[b'x'; 70000]).0, Parsed::Error("Protocol error: too big inline request"));
    }

    #[test]
    fn commands_by_name_and_arity() {
        let ask = |line: &str| {
            let mut w = Vec::new();
            let buf = format!("{line}\r\n").into_bytes();
            assert!(matches!(parse(&buf, &mut w), Parsed::Request(_)));
            let mut now = Vec::new();
            let c = command(&buf, &w, &mut now);
            (c, String::from_utf8(now).unwrap())
        };
        assert_eq!(ask("get k"), (Command::One(Op::Get), String::new()));
        assert_eq!(ask("SeT k v"), (Command::One(Op::Set), String::new()));
        assert_eq!(ask("INCR k"), (Command::One(Op::Incr), String::new()));
        assert_eq!(ask("DEL a b c"), (Command::Each(Op::Del), String::new()));
        assert_eq!(ask("exists a"), (Command::Each(Op::Exists), String::new()));
        assert_eq!(ask("PING"), (Command::Now, "+PONG\r\n".into()));
        assert_eq!(ask("ping hi"), (Command::Now, "$2\r\nhi\r\n".into()));
        assert_eq!(ask("ECHO abc"), (Command::Now, "$3\r\nabc\r\n".into()));
        assert_eq!(ask("echo"), (Command::Now, "-ERR wrong number of arguments for 'echo' command\r\n".into()));
        assert_eq!(ask("GET"), (Command::Now, "-ERR wrong number of arguments for 'get' command\r\n".into()));
        assert_eq!(ask("DEL"), (Command::Now, "-ERR wrong number of arguments for 'del' command\r\n".into()));
        assert_eq!(ask("EXISTS"), (Command::Now, "-ERR wrong number of arguments for 'exists' command\r\n".into()));
        assert_eq!(ask("SET k v EX 10"), (Command::Now, "-ERR syntax error\r\n".into()));
        assert_eq!(ask("CONFIG GET save appendonly"), (Command::Now, "*4\r\n$4\r\nsave\r\n$0\r\n\r\n$10\r\nappendonly\r\n$2\r\nno\r\n".into()));
        assert_eq!(ask("CONFIG GET maxmemory"), (Command::Now, "*0\r\n".into()));
        assert_eq!(ask("FLUSHALL"), (Command::Now, "-ERR unknown command 'FLUSHALL'\r\n".into()));
    }
}
