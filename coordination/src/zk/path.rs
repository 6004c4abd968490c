//! Validated ZooKeeper paths.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// An absolute ZooKeeper path: `/` or `/a/b` with non-empty components, no `.` or `..`
/// components, no trailing slash and no NUL. Construction validates, so every `Path` in the
/// program is well formed. The text is shared: a clone costs a reference count, not a copy
/// (the model checker clones and relabels every path of every state it stores).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Path(Arc<str>);

/// Why a string is not a valid ZooKeeper path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathError {
    /// The rejected text.
    pub path: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid ZooKeeper path {:?}: {}", self.path, self.reason)
    }
}

impl std::error::Error for PathError {}

impl Path {
    /// The root, `/`.
    pub fn root() -> Path {
        Path("/".into())
    }

    /// Validates `text` as an absolute path.
    pub fn new(text: &str) -> Result<Path, PathError> {
        let error = |reason| {
            Err(PathError {
                path: text.to_owned(),
                reason,
            })
        };
        if !text.starts_with('/') {
            return error("must start with '/'");
        }
        if text == "/" {
            return Ok(Path::root());
        }
        if text.ends_with('/') {
            return error("must not end with '/'");
        }
        for component in text[1..].split('/') {
            if let Err(reason) = check_name(component) {
                return error(reason);
            }
        }
        Ok(Path(text.into()))
    }

    /// The path as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True for `/`.
    pub fn is_root(&self) -> bool {
        &*self.0 == "/"
    }

    /// The parent path; `None` for the root.
    pub fn parent(&self) -> Option<Path> {
        if self.is_root() {
            return None;
        }
        let cut = self.0.rfind('/').expect("a valid path contains '/'");
        Some(if cut == 0 {
            Path::root()
        } else {
            Path(self.0[..cut].into())
        })
    }

    /// The last component (empty for the root).
    pub fn name(&self) -> &str {
        let cut = self.0.rfind('/').expect("a valid path contains '/'");
        &self.0[cut + 1..]
    }

    /// The child `name` of this path; `name` must be a single valid component.
    pub fn child(&self, name: &str) -> Result<Path, PathError> {
        check_name(name).map_err(|reason| PathError {
            path: format!("{}/{}", self.0.trim_end_matches('/'), name),
            reason,
        })?;
        let parent = if self.is_root() { "" } else { &*self.0 };
        let mut text = String::with_capacity(parent.len() + 1 + name.len());
        text.push_str(parent);
        text.push('/');
        text.push_str(name);
        Ok(Path(text.into()))
    }

    /// The proper ancestors of this path, from the one below the root down to the parent.
    pub fn ancestors(&self) -> Vec<Path> {
        let mut out = Vec::new();
        let mut current = self.parent();
        while let Some(path) = current {
            if path.is_root() {
                break;
            }
            current = path.parent();
            out.push(path);
        }
        out.reverse();
        out
    }
}

fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        Err("empty path component")
    } else if name == "." || name == ".." {
        Err("relative path component")
    } else if name.contains('\0') {
        Err("NUL character")
    } else if name.contains('/') {
        Err("'/' inside a node name")
    } else {
        Ok(())
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Path {
    type Error = PathError;
    fn try_from(text: String) -> Result<Path, PathError> {
        Path::new(&text)
    }
}

impl From<Path> for String {
    fn from(path: Path) -> String {
        path.0.to_string()
    }
}

/// Width of the sequential suffix ZooKeeper appends to sequential node names.
pub const SEQUENCE_DIGITS: usize = 10;

/// The sequence number at the end of a sequential node's name, if it has one.
pub fn sequence_suffix(name: &str) -> Option<u32> {
    let digits = name
        .as_bytes()
        .get(name.len().checked_sub(SEQUENCE_DIGITS)?..)?;
    // Ten decimal digits fit a u64; beyond u32 there is no suffix (as `parse` says).
    let mut value = 0u64;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value * 10 + u64::from(b - b'0');
    }
    u32::try_from(value).ok()
}

impl crate::relabel::Relabel for Path {
    /// Rewrites the protection prefix of every component.
    fn relabel(&self, map: &crate::relabel::ClientMap) -> Self {
        match map.path_text(&self.0) {
            Some(text) => Path(text.into()),
            None => self.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_paths_round_trip() {
        for text in ["/", "/a", "/a/b", "/locks/_c_1-lock-0000000001"] {
            assert_eq!(Path::new(text).unwrap().as_str(), text);
        }
    }

    #[test]
    fn invalid_paths_are_errors() {
        for text in ["", "a", "/a/", "//a", "/a//b", "/./a", "/a/..", "/a\0b"] {
            assert!(Path::new(text).is_err(), "{text:?} accepted");
        }
    }

    #[test]
    fn parent_name_child_ancestors() {
        let path = Path::new("/a/b/c").unwrap();
        assert_eq!(path.parent().unwrap().as_str(), "/a/b");
        assert_eq!(path.name(), "c");
        assert_eq!(Path::new("/a").unwrap().parent(), Some(Path::root()));
        assert_eq!(Path::root().parent(), None);
        assert_eq!(Path::root().child("x").unwrap().as_str(), "/x");
        assert!(path.child("x/y").is_err());
        let ancestors: Vec<_> = path.ancestors().iter().map(|p| p.to_string()).collect();
        assert_eq!(ancestors, ["/a", "/a/b"]);
    }

    #[test]
    fn sequence_suffixes() {
        assert_eq!(sequence_suffix("_c_x-lock-0000000042"), Some(42));
        assert_eq!(sequence_suffix("lock"), None);
        assert_eq!(sequence_suffix("lock-00000000x1"), None);
        assert_eq!(sequence_suffix("lock-4294967295"), Some(u32::MAX));
        assert_eq!(sequence_suffix("lock-4294967296"), None, "beyond u32");
        assert_eq!(sequence_suffix("0000000007"), Some(7));
        assert_eq!(sequence_suffix("é000000007"), None, "not a char boundary");
    }

    #[test]
    fn deserializing_validates() {
        let err = serde_json::from_str::<Path>("\"no-slash\"").unwrap_err();
        assert!(err.to_string().contains("must start with '/'"));
    }
}
