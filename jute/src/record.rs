//! The [`Record`] trait, and `record!`, which declares a jute record from its fields in wire
//! order.

use crate::error::Result;
use crate::frame::framed;
use crate::primitives::Reader;

/// A jute record: its fields, in order, with nothing between them.
pub trait Record: Sized {
    /// Its name in error messages, e.g. "create request".
    const NAME: &'static str;

    /// Appends its bytes to `out`.
    fn encode(&self, out: &mut Vec<u8>);

    /// Reads one from `reader`; an error names this record and the field that failed.
    fn decode(reader: &mut Reader<'_>) -> Result<Self>;

    /// Its bytes.
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }

    /// Its bytes as a frame: length, then body.
    fn to_frame(&self) -> Vec<u8> {
        framed(|out| self.encode(out))
    }

    /// Reads one that is the whole of `body`: bytes after it are an error.
    fn from_bytes(body: &[u8]) -> Result<Self> {
        let mut reader = Reader::new(body);
        let record = Self::decode(&mut reader)?;
        reader.end().map_err(|e| e.at(Self::NAME))?;
        Ok(record)
    }
}

/// Declares a record struct with public fields, in wire order, and its [`Record`] impl: each
/// field is a [`Field`](crate::Field) and an error names the record and the field.
macro_rules! record {
    ($(#[$meta:meta])* $name:ident, $label:literal {
        $($(#[$field_meta:meta])* $field:ident: $ty:ty),* $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq, Eq)]
        pub struct $name {
            $($(#[$field_meta])* pub $field: $ty,)*
        }

        impl $crate::record::Record for $name {
            const NAME: &'static str = $label;

            fn encode(&self, out: &mut Vec<u8>) {
                $($crate::primitives::Field::write(&self.$field, out);)*
            }

            fn decode(reader: &mut $crate::primitives::Reader<'_>) -> $crate::error::Result<Self> {
                let mut fields = || -> $crate::error::Result<Self> {
                    Ok(Self {
                        $($field: $crate::primitives::Field::read(reader)
                            .map_err(|e| e.at(stringify!($field)))?,)*
                    })
                };
                fields().map_err(|e| e.at($label))
            }
        }
    };
}

pub(crate) use record;
