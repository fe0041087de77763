//! The crate's own client for the checks: RESP requests out, replies parsed.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

pub struct Client {
    pub s: TcpStream,
    buf: Vec<u8>,
}

#[derive(Debug, PartialEq, Eq, Clone)]
pub enum Reply {
    Status(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Vec<Reply>),
}

pub fn bulk_reply(v: &[u8]) -> Reply {
    Reply::Bulk(Some(v.to_vec()))
}

impl Client {
    pub fn connect(port: u16) -> std::io::Result<Client> {
        let s = TcpStream::connect(("127.0.0.1", port))?;
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
        s.set_nodelay(true)?;
        Ok(Client { s, buf: Vec::new() })
    }

    pub fn encode(args: &[&[u8]]) -> Vec<u8> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            crate::store::bulk(&mut out, a);
        }
        out
    }

    pub fn send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.s.write_all(bytes)
    }

    pub fn call(&mut self, args: &[&[u8]]) -> std::io::Result<Reply> {
        self.send_raw(&Self::encode(args))?;
        self.reply()
    }

    pub fn reply(&mut self) -> std::io::Result<Reply> {
        loop {
            if let Some((r, used)) = Self::parse_reply(&self.buf) {
                self.buf.drain(..used);
                return Ok(r);
            }
            let mut chunk = [0u8; 16 * 1024];
            let n = self.s.read(&mut chunk)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    pub fn parse_reply(b: &[u8]) -> Option<(Reply, usize)> {
        let end = b.windows(2).position(|w| w == b"\r\n")?;
        let text = std::str::from_utf8(&b[1..end]).ok()?;
        let at = end + 2;
        Some(match *b.first()? {
            b'+' => (Reply::Status(text.to_string()), at),
            b'-' => (Reply::Error(text.to_string()), at),
            b':' => (Reply::Int(text.parse().ok()?), at),
            b'$' => {
                let len: i64 = text.parse().ok()?;
                if len < 0 {
                    (Reply::Bulk(None), at)
                } else {
                    let e = at + len as usize;
                    if b.len() < e + 2 {
                        return None;
                    }
                    (Reply::Bulk(Some(b[at..e].to_vec())), e + 2)
                }
            }
            b'*' => {
                let n: usize = text.parse().ok()?;
                let mut items = Vec::new();
                let mut at = at;
                for _ in 0..n {
                    let (r, used) = Self::parse_reply(&b[at..])?;
                    items.push(r);
                    at += used;
                }
                (Reply::Array(items), at)
            }
            _ => (Reply::Error(format!("unparsable reply {:?}", &b[..end])), at),
        })
    }
}

