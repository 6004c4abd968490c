//! jute's primitive types on the wire, all big-endian: `int` (4 bytes), `long` (8),
//! `boolean` (1 byte: ZooKeeper reads any non-zero byte as true and writes 1), `buffer` and
//! `ustring` (a 4-byte length, then that many bytes; length -1 is null), and `vector` (a
//! 4-byte count, then the elements; count -1 is null).
//!
//! Strings are read as Java reads them, `new String(bytes, UTF_8)`: a byte sequence that is
//! not UTF-8 becomes U+FFFD rather than an error. A length below -1 is an error (ZooKeeper
//! refuses it for strings and buffers). A null string or vector, or a null buffer where
//! ZooKeeper never writes one, is an error too; buffers that may be null on the wire (a
//! node's data) are `Option<Vec<u8>>`.

use crate::error::{Error, ErrorKind, Result};
use crate::record::Record;

/// A cursor over the bytes of a body, read front to back.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes }
    }

    /// How many bytes are left.
    pub fn remaining(&self) -> usize {
        self.bytes.len()
    }

    /// The next `n` bytes, or an error naming what they were to be.
    fn take(&mut self, n: usize, expected: impl FnOnce() -> String) -> Result<&'a [u8]> {
        if self.bytes.len() < n {
            return Err(Error::new(ErrorKind::Truncated {
                expected: expected(),
                left: self.bytes.len(),
            }));
        }
        let (taken, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(taken)
    }

    /// The next `N` bytes as an array.
    fn array<const N: usize>(&mut self, expected: &str) -> Result<[u8; N]> {
        let bytes = self.take(N, || expected.to_owned())?;
        Ok(bytes.try_into().unwrap_or([0; N]))
    }

    /// A jute `int`.
    pub fn int(&mut self) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array("an int (4 bytes)")?))
    }

    /// A jute `long`.
    pub fn long(&mut self) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array("a long (8 bytes)")?))
    }

    /// A jute `boolean`: any byte but 0 is true.
    pub fn bool(&mut self) -> Result<bool> {
        Ok(self.array::<1>("a boolean (1 byte)")? != [0])
    }

    /// The length of a string, buffer or vector (`what`): `None` for null (-1).
    pub fn length(&mut self, what: &'static str) -> Result<Option<usize>> {
        let length = self.int()?;
        match length {
            -1 => Ok(None),
            _ => usize::try_from(length)
                .map(Some)
                .map_err(|_| Error::new(ErrorKind::BadLength { what, length })),
        }
    }

    /// The bytes of a string or buffer (`what`), `None` for null.
    fn sized(&mut self, what: &'static str) -> Result<Option<&'a [u8]>> {
        let Some(length) = self.length(what)? else {
            return Ok(None);
        };
        self.take(length, || format!("{what} of {length} bytes"))
            .map(Some)
    }

    /// A jute `buffer`, `None` for null.
    pub fn buffer(&mut self) -> Result<Option<Vec<u8>>> {
        Ok(self.sized("a buffer")?.map(<[u8]>::to_vec))
    }

    /// A jute `ustring`, `None` for null.
    pub fn ustring(&mut self) -> Result<Option<String>> {
        let bytes = self.sized("a string")?;
        Ok(bytes.map(|b| String::from_utf8_lossy(b).into_owned()))
    }

    /// The rest of the bytes, whatever they are.
    pub fn rest(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.bytes).to_vec()
    }

    /// Nothing is left, or an error counting what is.
    pub fn end(&self) -> Result<()> {
        match self.bytes.len() {
            0 => Ok(()),
            count => Err(Error::new(ErrorKind::Trailing { count })),
        }
    }
}

/// Something a record's field can be: a primitive, a vector, or a record.
pub trait Field: Sized {
    /// Appends its bytes to `out`.
    fn write(&self, out: &mut Vec<u8>);
    /// Reads one from `reader`.
    fn read(reader: &mut Reader<'_>) -> Result<Self>;
}

impl Field for i32 {
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_be_bytes());
    }
    fn read(reader: &mut Reader<'_>) -> Result<Self> {
        reader.int()
    }
}

impl Field for i64 {
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_be_bytes());
    }
    fn read(reader: &mut Reader<'_>) -> Result<Self> {
        reader.long()
    }
}

impl Field for bool {
    fn write(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
    fn read(reader: &mut Reader<'_>) -> Result<Self> {
        reader.bool()
    }
}

/// Appends a length (-1 for `None`).
fn write_length(length: Option<usize>, out: &mut Vec<u8>) {
    let length = length.map_or(-1, |l| i32::try_from(l).unwrap_or(i32::MAX));
    length.write(out);
}

/// A buffer that ZooKeeper may send as null (a node's data).
impl Field for Option<Vec<u8>> {
    fn write(&self, out: &mut Vec<u8>) {
        write_length(self.as_ref().map(Vec::len), out);
        out.extend_from_slice(self.as_deref().unwrap_or_default());
    }
    fn read(reader: &mut Reader<'_>) -> Result<Self> {
        reader.buffer()
    }
}

/// A buffer that ZooKeeper never sends as null (a session's password, an auth token).
impl Field for Vec<u8> {
    fn write(&self, out: &mut Vec<u8>) {
        write_length(Some(self.len()), out);
        out.extend_from_slice(self);
    }
    fn read(reader: &mut Reader<'_>) -> Result<Self> {
        reader
            .buffer()?
            .ok_or(Error::new(ErrorKind::Null { what: "a buffer" }))
    }
}

impl Field for String {
    fn write(&self, out: &mut Vec<u8>) {
        write_length(Some(self.len()), out);
        out.extend_from_slice(self.as_bytes());
    }
    fn read(reader: &mut Reader<'_>) -> Result<Self> {
        reader
            .ustring()?
            .ok_or(Error::new(ErrorKind::Null { what: "a string" }))
    }
}

/// What a jute `vector` holds: strings and records.
pub trait Element: Field {}

impl Element for String {}

impl<T: Record> Element for T {}

impl<T: Record> Field for T {
    fn write(&self, out: &mut Vec<u8>) {
        self.encode(out);
    }
    fn read(reader: &mut Reader<'_>) -> Result<Self> {
        T::decode(reader)
    }
}

/// A vector, never null on ZooKeeper's wire; an element that cannot be read is named by its
/// index.
impl<T: Element> Field for Vec<T> {
    fn write(&self, out: &mut Vec<u8>) {
        write_length(Some(self.len()), out);
        for element in self {
            element.write(out);
        }
    }
    fn read(reader: &mut Reader<'_>) -> Result<Self> {
        let count = reader.length("a vector")?;
        let count = count.ok_or(Error::new(ErrorKind::Null { what: "a vector" }))?;
        // Each element takes a byte at least: a count past the bytes left allocates no more.
        let mut elements = Vec::with_capacity(count.min(reader.remaining()));
        for index in 0..count {
            elements.push(T::read(reader).map_err(|e| e.at(format!("[{index}]")))?);
        }
        Ok(elements)
    }
}

/// A boolean that may be missing at the end of a body: the connect handshake's `readOnly`,
/// which clients and servers older than 3.4 omit (ZooKeeper reads it if it is there).
impl Field for Option<bool> {
    fn write(&self, out: &mut Vec<u8>) {
        if let Some(flag) = self {
            flag.write(out);
        }
    }
    fn read(reader: &mut Reader<'_>) -> Result<Self> {
        match reader.remaining() {
            0 => Ok(None),
            _ => reader.bool().map(Some),
        }
    }
}
