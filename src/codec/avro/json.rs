//! Just enough JSON to read an Avro schema in place: borrowed spans of values, object members
//! and array elements, strings without unescaping. No allocation; nesting is bounded by
//! [`MAX_JSON_DEPTH`] and skipped without recursion.

use crate::error::{off, Error, ErrorKind, Result};

/// Deepest bracket nesting a schema may have.
pub const MAX_JSON_DEPTH: usize = 64;

/// One JSON value's text (leading and trailing whitespace removed) and its absolute offset.
#[derive(Clone, Copy, Debug)]
pub(super) struct Span<'s> {
    pub text: &'s [u8],
    pub at: u64,
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// A read position in JSON text.
#[derive(Clone, Copy, Debug)]
struct Reader<'s> {
    text: &'s [u8],
    pos: usize,
    origin: u64,
}

impl<'s> Reader<'s> {
    fn at(&self) -> u64 {
        self.origin.saturating_add(off(self.pos))
    }

    fn err(&self, kind: ErrorKind) -> Error {
        Error::new(kind, self.at())
    }

    fn ws(&mut self) {
        while self.text.get(self.pos).copied().is_some_and(is_ws) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn expect(&mut self, b: u8) -> Result<()> {
        self.ws();
        match self.peek() {
            Some(x) if x == b => {
                self.pos += 1;
                Ok(())
            }
            None => Err(self.err(ErrorKind::Truncated)),
            Some(_) => Err(self.err(ErrorKind::InvalidValue)),
        }
    }

    /// Skips a string whose opening quote is at `pos`; returns its raw contents.
    fn string(&mut self) -> Result<&'s [u8]> {
        let open = self.pos;
        self.pos += 1;
        loop {
            match self.peek() {
                None => return Err(self.err(ErrorKind::Truncated)),
                Some(b'"') => {
                    let s = self.text.get(open + 1..self.pos).unwrap_or_default();
                    self.pos += 1;
                    return Ok(s);
                }
                Some(b'\\') => self.pos += 2,
                Some(c) if c < 0x20 => return Err(self.err(ErrorKind::InvalidValue)),
                Some(_) => self.pos += 1,
            }
        }
    }

    /// Skips one value (any nesting up to [`MAX_JSON_DEPTH`]) and returns its span.
    fn value(&mut self) -> Result<Span<'s>> {
        self.ws();
        let start = self.pos;
        let at = self.at();
        match self.peek() {
            None => return Err(self.err(ErrorKind::Truncated)),
            Some(b'"') => {
                self.string()?;
            }
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                loop {
                    match self.peek() {
                        None => return Err(self.err(ErrorKind::Truncated)),
                        Some(b'"') => {
                            self.string()?;
                            continue;
                        }
                        Some(b'{' | b'[') => {
                            depth += 1;
                            if depth > MAX_JSON_DEPTH {
                                return Err(self.err(ErrorKind::DepthLimit));
                            }
                        }
                        Some(b'}' | b']') => {
                            depth -= 1;
                            if depth == 0 {
                                self.pos += 1;
                                break;
                            }
                        }
                        Some(_) => {}
                    }
                    self.pos += 1;
                }
            }
            Some(c) if c == b'-' || c.is_ascii_alphanumeric() => {
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'+' | b'.'))
                {
                    self.pos += 1;
                }
            }
            Some(_) => return Err(self.err(ErrorKind::InvalidValue)),
        }
        Ok(Span {
            text: self.text.get(start..self.pos).unwrap_or_default(),
            at,
        })
    }
}

impl<'s> Span<'s> {
    /// The whole `text` as one value (surrounding whitespace allowed, nothing else).
    pub fn parse(text: &'s [u8], origin: u64) -> Result<Self> {
        let mut r = Reader {
            text,
            pos: 0,
            origin,
        };
        let span = r.value()?;
        r.ws();
        if r.pos != text.len() {
            return Err(r.err(ErrorKind::TrailingBytes));
        }
        Ok(span)
    }

    /// The raw contents of a string value (escapes left as written).
    pub fn as_str(&self) -> Option<&'s [u8]> {
        match self.text {
            [b'"', inner @ .., b'"'] => Some(inner),
            _ => None,
        }
    }

    /// A non-negative integer value.
    pub fn as_u64(&self) -> Option<u64> {
        if self.text.is_empty() || self.text.len() > 19 {
            return None;
        }
        let mut v = 0u64;
        for &c in self.text {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + u64::from(c - b'0');
        }
        Some(v)
    }

    pub fn is_object(&self) -> bool {
        self.text.first() == Some(&b'{')
    }

    pub fn is_array(&self) -> bool {
        self.text.first() == Some(&b'[')
    }

    fn inner(&self) -> Reader<'s> {
        Reader {
            text: self.text,
            pos: 1,
            origin: self.at,
        }
    }

    /// The members `(raw key, value)` of an object, in order.
    pub fn members(&self) -> Members<'s> {
        Members {
            r: self.inner(),
            first: true,
            done: !self.is_object(),
        }
    }

    /// The value of member `key` of an object (the first one).
    pub fn member(&self, key: &[u8]) -> Result<Option<Span<'s>>> {
        for m in self.members() {
            let (k, v) = m?;
            if k == key {
                return Ok(Some(v));
            }
        }
        Ok(None)
    }

    /// The elements of an array, in order.
    pub fn elements(&self) -> Elements<'s> {
        Elements {
            r: self.inner(),
            first: true,
            done: !self.is_array(),
        }
    }
}

/// Object members; see [`Span::members`].
pub(super) struct Members<'s> {
    r: Reader<'s>,
    first: bool,
    done: bool,
}

impl<'s> Members<'s> {
    fn step(&mut self) -> Result<Option<(&'s [u8], Span<'s>)>> {
        self.r.ws();
        if self.r.peek() == Some(b'}') {
            return Ok(None);
        }
        if !self.first {
            self.r.expect(b',')?;
            self.r.ws();
        }
        self.first = false;
        if self.r.peek() != Some(b'"') {
            return Err(self.r.err(ErrorKind::InvalidValue));
        }
        let key = self.r.string()?;
        self.r.expect(b':')?;
        let value = self.r.value()?;
        Ok(Some((key, value)))
    }
}

impl<'s> Iterator for Members<'s> {
    type Item = Result<(&'s [u8], Span<'s>)>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.step();
        self.done = !matches!(r, Ok(Some(_)));
        r.transpose()
    }
}

/// Array elements; see [`Span::elements`].
pub(super) struct Elements<'s> {
    r: Reader<'s>,
    first: bool,
    done: bool,
}

impl<'s> Elements<'s> {
    fn step(&mut self) -> Result<Option<Span<'s>>> {
        self.r.ws();
        if self.r.peek() == Some(b']') {
            return Ok(None);
        }
        if !self.first {
            self.r.expect(b',')?;
        }
        self.first = false;
        self.r.value().map(Some)
    }
}

impl<'s> Iterator for Elements<'s> {
    type Item = Result<Span<'s>>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.step();
        self.done = !matches!(r, Ok(Some(_)));
        r.transpose()
    }
}
