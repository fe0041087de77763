//! A client connection's replies in request order, whichever shard answers first, and the
//! table of a shard's connections, whose tokens are never reused while an answer for an
//! old connection may still come back.

use crate::store::{int, parse_i64};
use std::collections::VecDeque;
use std::net::TcpStream;

/// A request whose reply is not yet in `Conn::out`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// answered: this range of `Conn::held`
    Ready(usize, usize),
    /// waiting for its owner's reply
    One,
    /// waiting for `parts` integer replies, summed (`DEL`, `EXISTS` over several owners)
    Sum { parts: u32, sum: i64 },
}

/// A client connection, owned by the shard whose listener accepted it.
pub struct Conn {
    pub stream: TcpStream,
    /// bytes read, not yet parsed
    pub inbuf: Vec<u8>,
    /// replies ready to write, in order
    pub out: Vec<u8>,
    /// replies that came before an earlier request's (the ranges of `Slot::Ready`)
    held: Vec<u8>,
    /// the requests from the first unanswered one on; `base` is its number
    slots: VecDeque<Slot>,
    base: u64,
    /// the next request's number
    next: u64,
    /// the client closed its side, or sent what cannot be parsed: close once every reply
    /// of what it sent before is out
    pub eof: bool,
    /// EPOLLOUT is armed (the socket was full)
    pub writing: bool,
    /// on the shard's list of connections to flush this pass
    pub queued: bool,
}

impl Conn {
    pub fn new(stream: TcpStream) -> Conn {
        Conn {
            stream,
            inbuf: Vec::new(),
            out: Vec::new(),
            held: Vec::new(),
            slots: VecDeque::new(),
            base: 0,
            next: 0,
            eof: false,
            writing: false,
            queued: false,
        }
    }

    /// A reply known at once, for the next request.
    pub fn reply_now(&mut self, reply: &[u8]) {
        self.next += 1;
        if self.slots.is_empty() {
            self.out.extend_from_slice(reply);
        } else {
            let start = self.held.len();
            self.held.extend_from_slice(reply);
            self.slots.push_back(Slot::Ready(start, self.held.len()));
        }
    }

    /// The next request waits for `parts` replies from owners (summed when more than one);
    /// its number, for [`Conn::answer`].
    pub fn reply_later(&mut self, parts: u32, sum: bool) -> u64 {
        if self.slots.is_empty() {
            self.base = self.next;
        }
        self.slots.push_back(if sum { Slot::Sum { parts, sum: 0 } } else { Slot::One });
        self.next += 1;
        self.next - 1
    }

    /// An owner's reply for request `seq`; true when this put bytes in `out`.
    pub fn answer(&mut self, seq: u64, reply: &[u8]) -> bool {
        let Some(i) = seq.checked_sub(self.base).and_then(|i| usize::try_from(i).ok()) else { return false };
        let Some(slot) = self.slots.get_mut(i) else { return false };
        match slot {
            Slot::One if i == 0 => {
                self.out.extend_from_slice(reply);
                self.slots.pop_front();
                self.base += 1;
            }
            Slot::One => {
                let start = self.held.len();
                self.held.extend_from_slice(reply);
                *slot = Slot::Ready(start, self.held.len());
                return false;
            }
            Slot::Sum { parts, sum } => {
                // an owner's `:n` (what else would be a bug of ours: counted as nothing)
                let n = reply.strip_prefix(b":").and_then(|r| r.strip_suffix(b"\r\n")).and_then(parse_i64).unwrap_or(0);
                *sum += n;
                *parts -= 1;
                if *parts > 0 {
                    return false;
                }
                let total = *sum;
                if i == 0 {
                    int(&mut self.out, total);
                    self.slots.pop_front();
                    self.base += 1;
                } else {
                    let start = self.held.len();
                    int(&mut self.held, total);
                    *slot = Slot::Ready(start, self.held.len());
                    return false;
                }
            }
            Slot::Ready(..) => return false,
        }
        // what waited behind it
        while let Some(&Slot::Ready(s, e)) = self.slots.front() {
            self.out.extend_from_slice(&self.held[s..e]);
            self.slots.pop_front();
            self.base += 1;
        }
        if self.slots.is_empty() {
            self.held.clear();
        }
        true
    }

    /// Replies still to come from owners.
    pub fn waiting(&self) -> bool {
        !self.slots.is_empty()
    }
}

/// A shard's connections by token: an index and a generation, so that the answer for a
/// connection closed meanwhile finds no connection rather than its slot's next one. Tokens
/// are at least 2^32 (generations start at 1): below are the loop's own (eventfd, listener).
#[derive(Default)]
pub struct Conns {
    slots: Vec<(u32, Option<Conn>)>,
    free: Vec<u32>,
}

impl Conns {
    pub fn insert(&mut self, c: Conn) -> u64 {
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push((1, None));
                (self.slots.len() - 1) as u32
            }
        };
        let slot = &mut self.slots[i as usize];
        slot.1 = Some(c);
        (u64::from(slot.0) << 32) | u64::from(i)
    }

    pub fn get(&mut self, tok: u64) -> Option<&mut Conn> {
        let (gen, i) = ((tok >> 32) as u32, tok as u32);
        match self.slots.get_mut(i as usize) {
            Some((g, Some(c))) if *g == gen => Some(c),
            _ => None,
        }
    }

    pub fn remove(&mut self, tok: u64) -> Option<Conn> {
        let (gen, i) = ((tok >> 32) as u32, tok as u32);
        match self.slots.get_mut(i as usize) {
            Some((g, c @ Some(_))) if *g == gen => {
                // generation 0 never names a connection: tokens stay above the loop's own
                *g = g.checked_add(1).unwrap_or(1);
                self.free.push(i);
                c.take()
            }
            _ => None,
        }
    }

    pub fn clear(&mut self) {
        self.slots.clear();
        self.free.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> Conn {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        Conn::new(TcpStream::connect(l.local_addr().unwrap()).unwrap())
    }

    #[test]
    fn replies_leave_in_request_order() {
        let mut c = conn();
        c.reply_now(b"+a\r\n");
        let s1 = c.reply_later(1, false);
        c.reply_now(b"+c\r\n");
        let s3 = c.reply_later(2, true);
        let s4 = c.reply_later(1, false);
        c.reply_now(b"+f\r\n");
        assert_eq!(c.out, b"+a\r\n");
        assert!(!c.answer(s4, b"+e\r\n"));
        assert!(!c.answer(s3, b":1\r\n"));
        assert!(c.answer(s1, b"+b\r\n"));
        assert_eq!(c.out, b"+a\r\n+b\r\n+c\r\n");
        assert!(c.waiting());
        assert!(c.answer(s3, b":1\r\n"));
        assert_eq!(c.out, b"+a\r\n+b\r\n+c\r\n:2\r\n+e\r\n+f\r\n");
        assert!(!c.waiting());
        // a duplicate or unknown answer changes nothing
        assert!(!c.answer(s1, b"+x\r\n"));
        assert!(!c.answer(99, b"+x\r\n"));
        let s = c.reply_later(1, false);
        assert!(c.answer(s, b"+g\r\n"));
        assert!(c.out.ends_with(b"+f\r\n+g\r\n"));
    }

    #[test]
    fn a_closed_connections_token_finds_nothing() {
        let mut t = Conns::default();
        let a = t.insert(conn());
        assert!(a >= 1 << 32);
        assert!(t.get(a).is_some());
        assert!(t.remove(a).is_some());
        let b = t.insert(conn());
        assert_eq!(a as u32, b as u32, "the slot is reused");
        assert!(t.get(a).is_none() && t.remove(a).is_none(), "the old token is not the new connection");
        assert!(t.get(b).is_some());
    }
}
