//! A small HTTP/1.1 client that runs in the caller's task: S7's MCP client.
//!
//! hyper's client runs its connection in a task of its own, so each request is handed to
//! that task and each response handed back: two task hand-offs per call on the client
//! side, which on a 2-worker runtime can each wake the parked worker. This client writes
//! the request and reads the response on one kept-alive `TcpStream` from the caller's own
//! task, so S7 times what the gateway does rather than the client's hand-offs.
//!
//! It is a real client, within what an MCP client needs: the status line and headers are
//! parsed by `httparse`; the body is framed as RFC 9112 section 6.3 says (no body for
//! 1xx/204/304, `Transfer-Encoding: chunked` decoded with its trailers, `Content-Length`
//! read exactly, otherwise read to the close); interim 1xx responses are skipped; a
//! `Connection: close` answer or a close-delimited body ends the connection. An SSE answer
//! is a chunked body like any other: it is read whole, and the caller parses its events.

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Most headers a response may have.
const MAX_HEADERS: usize = 64;
/// Largest response head (status line and headers) accepted.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Read granularity.
const READ_CHUNK: usize = 16 * 1024;

pub struct Response {
    pub status: u16,
    /// Names in lower case, in the order received.
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

pub struct Http1 {
    tcp: TcpStream,
    buf: BytesMut,
    /// The server said `Connection: close`, or the last body ran to the close.
    closed: bool,
}

impl Http1 {
    pub async fn connect(addr: std::net::SocketAddr) -> Result<Self, String> {
        let tcp = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        tcp.set_nodelay(true).map_err(|e| e.to_string())?;
        Ok(Self {
            tcp,
            buf: BytesMut::with_capacity(READ_CHUNK),
            closed: false,
        })
    }

    /// Sends `method path` with `headers` (without `content-length`, added here) and
    /// `body`, and reads the whole response.
    pub async fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Response, String> {
        if self.closed {
            return Err("the server closed the connection".into());
        }
        let mut req = Vec::with_capacity(256 + body.len());
        req.extend_from_slice(format!("{method} {path} HTTP/1.1\r\n").as_bytes());
        for (name, value) in headers {
            if value.contains(['\r', '\n']) {
                return Err(format!("header {name} has a line break"));
            }
            req.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        req.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
        req.extend_from_slice(body);
        self.tcp
            .write_all(&req)
            .await
            .map_err(|e| format!("write: {e}"))?;
        loop {
            let (status, headers) = self.head().await?;
            if (100..200).contains(&status) && status != 101 {
                continue;
            }
            let body = self.body(method, status, &headers).await?;
            let close = headers
                .iter()
                .any(|(n, v)| n == "connection" && has_token(v, "close"));
            self.closed |= close;
            return Ok(Response {
                status,
                headers,
                body,
            });
        }
    }

    /// Reads more into the buffer; an error at the end of the stream.
    async fn fill(&mut self) -> Result<(), String> {
        self.buf.reserve(READ_CHUNK);
        match self.tcp.read_buf(&mut self.buf).await {
            Ok(0) => Err("the server closed the connection mid-response".into()),
            Ok(_) => Ok(()),
            Err(e) => Err(format!("read: {e}")),
        }
    }

    async fn head(&mut self) -> Result<(u16, Vec<(String, String)>), String> {
        loop {
            let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut parsed = httparse::Response::new(&mut slots);
            match parsed.parse(&self.buf) {
                Ok(httparse::Status::Complete(len)) => {
                    let status = parsed.code.ok_or("no status code")?;
                    let headers = parsed
                        .headers
                        .iter()
                        .map(|h| {
                            let value = String::from_utf8_lossy(h.value).trim().to_string();
                            (h.name.to_ascii_lowercase(), value)
                        })
                        .collect();
                    self.buf.advance(len);
                    return Ok((status, headers));
                }
                Ok(httparse::Status::Partial) if self.buf.len() <= MAX_HEAD_BYTES => {
                    self.fill().await?
                }
                Ok(httparse::Status::Partial) => return Err("response head too large".into()),
                Err(e) => return Err(format!("bad response head: {e}")),
            }
        }
    }

    async fn body(
        &mut self,
        method: &str,
        status: u16,
        headers: &[(String, String)],
    ) -> Result<Bytes, String> {
        if method == "HEAD" || status == 204 || status == 304 {
            return Ok(Bytes::new());
        }
        let value = |name: &'static str| headers.iter().filter(move |(n, _)| n == name);
        if let Some((_, te)) = value("transfer-encoding").next_back() {
            // Chunked must be the final coding; anything else runs to the close.
            if te.rsplit(',').next().map(str::trim) == Some("chunked") {
                return self.chunked().await;
            }
            return self.read_to_close().await;
        }
        let mut lengths = value("content-length").map(|(_, v)| v.parse::<usize>());
        match lengths.next() {
            Some(Ok(n)) if lengths.all(|m| m == Ok(n)) => self.exact(n).await,
            Some(_) => Err("bad or conflicting Content-Length".into()),
            None => self.read_to_close().await,
        }
    }

    async fn exact(&mut self, n: usize) -> Result<Bytes, String> {
        while self.buf.len() < n {
            self.fill().await?;
        }
        Ok(self.buf.split_to(n).freeze())
    }

    async fn read_to_close(&mut self) -> Result<Bytes, String> {
        self.closed = true;
        loop {
            self.buf.reserve(READ_CHUNK);
            match self.tcp.read_buf(&mut self.buf).await {
                Ok(0) => return Ok(self.buf.split().freeze()),
                Ok(_) => {}
                Err(e) => return Err(format!("read: {e}")),
            }
        }
    }

    /// One CRLF-terminated line, without the CRLF.
    async fn line(&mut self) -> Result<Bytes, String> {
        loop {
            if let Some(at) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = self.buf.split_to(at).freeze();
                self.buf.advance(2);
                return Ok(line);
            }
            if self.buf.len() > MAX_HEAD_BYTES {
                return Err("chunk line too long".into());
            }
            self.fill().await?;
        }
    }

    async fn chunked(&mut self) -> Result<Bytes, String> {
        let mut body = BytesMut::new();
        loop {
            let line = self.line().await?;
            let size = std::str::from_utf8(&line)
                .ok()
                .and_then(|l| l.split(';').next())
                .and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
                .ok_or_else(|| format!("bad chunk size {line:?}"))?;
            if size == 0 {
                // Trailers up to the empty line.
                while !self.line().await?.is_empty() {}
                return Ok(body.freeze());
            }
            body.extend_from_slice(&self.exact(size).await?);
            if !self.line().await?.is_empty() {
                return Err("chunk not followed by CRLF".into());
            }
        }
    }
}

/// Whether a comma-separated header value lists `token` (case-insensitive).
fn has_token(value: &str, token: &str) -> bool {
    value
        .split(',')
        .any(|t| t.trim().eq_ignore_ascii_case(token))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    /// A server that answers each request with the next canned response.
    async fn serve(answers: Vec<&'static [u8]>) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut tcp, _) = listener.accept().await.unwrap();
            let mut buf = Vec::new();
            for answer in answers {
                // Each request ends with its empty body after the head.
                loop {
                    if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        buf.drain(..at + 4);
                        break;
                    }
                    let mut chunk = [0u8; 1024];
                    let n = tcp.read(&mut chunk).await.unwrap();
                    buf.extend_from_slice(&chunk[..n]);
                }
                tcp.write_all(answer).await.unwrap();
            }
        });
        addr
    }

    #[tokio::test]
    async fn frames_bodies_as_rfc_9112_says() {
        let addr = serve(vec![
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/event-stream\r\n\r\n5;x=1\r\ndata:\r\n3\r\n {}\r\n0\r\nTrailer: t\r\n\r\n",
            b"HTTP/1.1 204 No Content\r\n\r\n",
            b"HTTP/1.1 202 Accepted\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
        ])
        .await;
        let mut c = Http1::connect(addr).await.unwrap();
        let r = c.send("POST", "/", &[], b"").await.unwrap();
        assert_eq!((r.status, &r.body[..]), (200, &b"hello"[..]));
        let r = c.send("POST", "/", &[], b"").await.unwrap();
        assert_eq!(r.header("content-type"), Some("text/event-stream"));
        assert_eq!((r.status, &r.body[..]), (200, &b"data: {}"[..]));
        let r = c.send("POST", "/", &[], b"").await.unwrap();
        assert_eq!((r.status, r.body.len()), (204, 0));
        let r = c.send("POST", "/", &[], b"").await.unwrap();
        assert_eq!(r.status, 202);
        assert!(c.send("POST", "/", &[], b"").await.is_err());
    }

    #[tokio::test]
    async fn reads_a_body_to_the_close() {
        let addr = serve(vec![b"HTTP/1.1 200 OK\r\n\r\nuntil close"]).await;
        let mut c = Http1::connect(addr).await.unwrap();
        let r = c.send("GET", "/", &[], b"").await.unwrap();
        assert_eq!(&r.body[..], b"until close");
    }
}
