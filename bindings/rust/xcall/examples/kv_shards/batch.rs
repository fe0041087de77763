//! A batch: the requests one shard read in one pass of its loop for the keys of one other
//! shard, sent there as one message, and brought back in the same buffers with the answers.
//! Buffers are cleared, never freed: a shard keeps its batches for the next pass, so that a
//! request costs no allocation once the buffers have grown.

use crate::store::{Op, Store};

/// Which connection's which request an op answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tag {
    pub tok: u64,
    pub seq: u64,
}

#[derive(Default)]
pub struct Batch {
    /// the shard that read the requests, and the keys' owner
    pub from: usize,
    pub to: usize,
    /// on its way back
    pub answered: bool,
    /// the ops: code, key length, key, value length, value (lengths u32, native order)
    ops: Vec<u8>,
    tags: Vec<Tag>,
    /// the owner's replies, one after the other, each ending at its `ends`
    replies: Vec<u8>,
    ends: Vec<u32>,
}

impl Batch {
    pub fn new(from: usize, to: usize) -> Batch {
        Batch { from, to, ..Batch::default() }
    }

    pub fn len(&self) -> usize {
        self.tags.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tags.is_empty()
    }

    pub fn push(&mut self, tag: Tag, op: Op, key: &[u8], val: &[u8]) {
        self.ops.push(op.code());
        self.ops.extend_from_slice(&(key.len() as u32).to_ne_bytes());
        self.ops.extend_from_slice(key);
        self.ops.extend_from_slice(&(val.len() as u32).to_ne_bytes());
        self.ops.extend_from_slice(val);
        self.tags.push(tag);
    }

    /// On the owner: run every op in order on its store, the replies kept in the batch.
    pub fn exec(&mut self, store: &mut Store) {
        self.replies.clear();
        self.ends.clear();
        let mut at = 0;
        while at < self.ops.len() {
            let (op, key, val, next) = op_at(&self.ops, at);
            store.exec(op, key, val, &mut self.replies);
            self.ends.push(self.replies.len() as u32);
            at = next;
        }
    }

    /// On the origin: each request's tag and reply, in order.
    pub fn answers(&self) -> impl Iterator<Item = (Tag, &[u8])> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().map(|&e| e as usize));
        self.tags.iter().zip(starts.zip(self.ends.iter())).map(|(&t, (s, &e))| (t, &self.replies[s..e as usize]))
    }

    /// Every request answered with `-ERR why` (the batch could not be sent).
    pub fn fail(&mut self, why: &str) {
        self.replies.clear();
        self.ends.clear();
        for _ in 0..self.tags.len() {
            self.replies.extend_from_slice(b"-ERR ");
            self.replies.extend_from_slice(why.as_bytes());
            self.replies.extend_from_slice(b"\r\n");
            self.ends.push(self.replies.len() as u32);
        }
    }

    /// Empty again, its buffers kept.
    pub fn clear(&mut self) {
        self.ops.clear();
        self.tags.clear();
        self.replies.clear();
        self.ends.clear();
        self.answered = false;
    }
}

/// The op at `at` of an encoded list: the op, its key and value, and where the next starts.
fn op_at(ops: &[u8], at: usize) -> (Op, &[u8], &[u8], usize) {
    let len = |i: usize| u32::from_ne_bytes(ops[i..i + 4].try_into().expect("4 bytes")) as usize;
    let op = Op::from_code(ops[at]).expect("an op this shard encoded");
    let klen = len(at + 1);
    let key = &ops[at + 5..at + 5 + klen];
    let vat = at + 5 + klen;
    let vlen = len(vat);
    (op, key, &ops[vat + 4..vat + 4 + vlen], vat + 4 + vlen)
}

#[test]
fn a_batch_runs_in_order_and_answers_each_tag() {
    let mut b = Batch::new(0, 1);
    let t = |seq| Tag { tok: 7, seq };
    b.push(t(0), Op::Set, b"k", b"v\r\n");
    b.push(t(1), Op::Get, b"k", b"");
    b.push(t(2), Op::Incr, b"n", b"");
    b.push(t(3), Op::Del, b"k", b"");
    b.push(t(4), Op::Exists, b"k", b"");
    let mut s = Store::default();
    b.exec(&mut s);
    let got: Vec<(u64, String)> = b.answers().map(|(t, r)| (t.seq, String::from_utf8(r.to_vec()).unwrap())).collect();
    let want = [(0, "+OK\r\n"), (1, "$3\r\nv\r\n\r\n"), (2, ":1\r\n"), (3, ":1\r\n"), (4, ":0\r\n")];
    assert_eq!(got, want.map(|(s, r)| (s, r.to_string())));
    b.clear();
    assert!(b.is_empty() && b.answers().next().is_none());
}
