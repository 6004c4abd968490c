//! Fencing tokens and the protected resource that checks them.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::zk::Zxid;

/// A fencing token: the czxid of the lock node of one acquisition. Successive holders of a
/// lock get strictly increasing tokens because zxids only grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Token(pub u64);

impl From<Zxid> for Token {
    fn from(zxid: Zxid) -> Token {
        Token(zxid.0)
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// An access refused because a higher token has been seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Stale {
    /// The highest token seen so far.
    pub highest: Token,
}

/// The resource a lock protects: a counter read and written with a token. When `fenced`, an
/// access whose token is below the highest seen is rejected; unfenced, every access is
/// accepted (the workload setting that shows lost updates).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FencedResource {
    fenced: bool,
    highest: Option<Token>,
    value: u64,
}

impl FencedResource {
    /// A counter at 0 that checks tokens when `fenced`.
    pub fn new(fenced: bool) -> FencedResource {
        FencedResource {
            fenced,
            highest: None,
            value: 0,
        }
    }

    /// The counter's value.
    pub fn value(&self) -> u64 {
        self.value
    }

    /// Reads the counter with `token`.
    pub fn read(&mut self, token: Token) -> Result<u64, Stale> {
        self.admit(token)?;
        Ok(self.value)
    }

    /// Writes `value` with `token`.
    pub fn write(&mut self, token: Token, value: u64) -> Result<(), Stale> {
        self.admit(token)?;
        self.value = value;
        Ok(())
    }

    fn admit(&mut self, token: Token) -> Result<(), Stale> {
        match self.highest {
            Some(highest) if self.fenced && token < highest => Err(Stale { highest }),
            _ => {
                self.highest = self.highest.max(Some(token));
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fenced_resource_rejects_stale_reads_and_writes() {
        let mut resource = FencedResource::new(true);
        assert_eq!(resource.read(Token(5)), Ok(0));
        resource.write(Token(5), 1).unwrap();
        assert_eq!(resource.read(Token(9)), Ok(1));
        let stale = Stale { highest: Token(9) };
        assert_eq!(resource.read(Token(5)), Err(stale));
        assert_eq!(resource.write(Token(5), 7), Err(stale));
        assert_eq!(resource.value(), 1);
        resource.write(Token(9), 2).unwrap();
        assert_eq!(resource.value(), 2);
    }

    #[test]
    fn an_unfenced_resource_accepts_everything() {
        let mut resource = FencedResource::new(false);
        resource.write(Token(9), 1).unwrap();
        resource.write(Token(5), 2).unwrap();
        assert_eq!(resource.read(Token(1)), Ok(2));
    }
}
