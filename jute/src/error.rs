//! What can go wrong reading ZooKeeper's bytes: a malformed record ([`Error`]), a frame
//! length out of bounds ([`FrameError`]), a number that is not one of ZooKeeper's codes
//! ([`UnknownCode`]).

use std::fmt;

/// The result of decoding.
pub type Result<T> = std::result::Result<T, Error>;

/// A record that could not be decoded: where (the record and field names, outermost first)
/// and what was wrong, e.g. "create request: path: expected a string of 13 bytes, found 4
/// bytes left".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The records and fields being read, outermost first.
    pub context: Vec<String>,
    /// What was wrong there.
    pub kind: ErrorKind,
}

impl Error {
    /// An error of `kind` at the current place (callers add the names around it with
    /// [`Error::at`]).
    pub fn new(kind: ErrorKind) -> Error {
        Error {
            context: Vec::new(),
            kind,
        }
    }

    /// The same error, inside the record or field `name`.
    pub fn at(mut self, name: impl Into<String>) -> Error {
        self.context.insert(0, name.into());
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for name in &self.context {
            write!(f, "{name}: ")?;
        }
        write!(f, "{}", self.kind)
    }
}

impl std::error::Error for Error {}

/// What was wrong with the bytes at one place.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    /// The input ended early.
    #[error("expected {expected}, found {left} bytes left")]
    Truncated {
        /// What was to be read, e.g. "a string of 13 bytes".
        expected: String,
        /// How many bytes were left.
        left: usize,
    },
    /// A length below -1 (jute's null) for a string, buffer or vector.
    #[error("expected the length of {what} (-1 for null, or 0 and more), found {length}")]
    BadLength {
        /// "a string", "a buffer" or "a vector".
        what: &'static str,
        /// The length read.
        length: i32,
    },
    /// A null (length -1) where ZooKeeper always writes a value.
    #[error("expected {what}, found null (length -1)")]
    Null {
        /// "a string", "a buffer" or "a vector".
        what: &'static str,
    },
    /// Bytes after the end of a record that is the whole body.
    #[error("expected the end of the body, found {count} bytes more")]
    Trailing {
        /// How many bytes were left over.
        count: usize,
    },
    /// An op in a `multi` or `multiRead` that ZooKeeper does not allow there.
    #[error(
        "expected a multi's op (create, delete, setData, check, getChildren or getData), found op code {code}"
    )]
    NotMultiOp {
        /// The op code read.
        code: i32,
    },
    /// A `multi` response's result of a type ZooKeeper does not write there.
    #[error("expected a multi result's type, found {code}")]
    NotMultiResult {
        /// The type read.
        code: i32,
    },
}

/// A frame length that is not ZooKeeper's: below zero, or past
/// [`MAX_FRAME`](crate::frame::MAX_FRAME).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a frame length of {length}, not between 0 and {max}", max = crate::frame::MAX_FRAME)]
pub struct FrameError {
    /// The length read.
    pub length: i32,
}

/// A number that is none of ZooKeeper's codes of one kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code} is not a known {kind}")]
pub struct UnknownCode {
    /// The kind of code, e.g. "op code".
    pub kind: &'static str,
    /// The number.
    pub code: i32,
}
