//! Reading a scenario file: serde with `deny_unknown_fields`, then the semantic checks, and
//! every mistake reported as one line `file: /json/pointer: expected X, found Y`.

use std::fmt;

use serde_json::error::Category;

use super::Scenario;
use super::validate::validate;

/// Why a scenario file was rejected: where, and what was expected instead of what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file (or other source) name.
    pub file: String,
    /// JSON pointer to the offending value (`""` for the whole document).
    pub pointer: String,
    /// `expected X, found Y`.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "{}: {}: {}", self.file, pointer, self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// A semantic mistake found after parsing: a JSON pointer and what was expected there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Invalid {
    pub pointer: String,
    pub expected: String,
    pub found: String,
}

/// Parses any JSON document (a scenario, a trace) with the one-line errors of scenario files;
/// `file` names it in errors.
pub fn parse_json<T: serde::de::DeserializeOwned>(
    file: &str,
    text: &str,
) -> Result<T, ScenarioError> {
    let error = |pointer: String, message: String| ScenarioError {
        file: file.to_owned(),
        pointer,
        message,
    };
    let mut json = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut json)
        .map_err(|e| error(pointer(e.path()), reword(e.inner())))?;
    json.end().map_err(|e| error(String::new(), reword(&e)))?;
    Ok(value)
}

impl Scenario {
    /// Parses and checks a scenario file; `file` names it in errors.
    pub fn from_json(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
        let scenario: Scenario = parse_json(file, text)?;
        validate(&scenario).map_err(|invalid| ScenarioError {
            file: file.to_owned(),
            pointer: invalid.pointer,
            message: format!("expected {}, found {}", invalid.expected, invalid.found),
        })?;
        Ok(scenario)
    }
}

/// The JSON pointer (RFC 6901) of a serde path.
fn pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("/{index}")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                out.push('/');
                out.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
            Segment::Unknown => {}
        }
    }
    out
}

/// serde's messages rewritten as `expected X, found Y`.
fn reword(error: &serde_json::Error) -> String {
    let full = error.to_string();
    let message = full
        .rfind(" at line ")
        .map_or(full.as_str(), |cut| &full[..cut]);
    if matches!(
        error.classify(),
        Category::Syntax | Category::Eof | Category::Io
    ) {
        return format!(
            "expected valid JSON, found {message} (line {} column {})",
            error.line(),
            error.column()
        );
    }
    reword_data(message)
}

/// Rewrites one of serde's data-error messages (ours, already `expected X, found Y`, stay).
fn reword_data(message: &str) -> String {
    if message.starts_with("expected ") {
        return message.to_owned();
    }
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = message.strip_prefix(prefix)
            && let Some((found, expected)) = rest.split_once(", expected ")
        {
            return format!("expected {expected}, found {found}");
        }
    }
    if let Some(rest) = message.strip_prefix("invalid length ")
        && let Some((found, expected)) = rest.split_once(", expected ")
    {
        return format!("expected {expected}, found length {found}");
    }
    for what in ["field", "variant"] {
        if let Some(rest) = message.strip_prefix(&format!("unknown {what} ")) {
            let (name, expected) = rest.split_once(", ").unwrap_or((rest, ""));
            let expected = match expected {
                "there are no fields" | "there are no variants" | "" => "nothing here".to_owned(),
                other => other.strip_prefix("expected ").unwrap_or(other).to_owned(),
            };
            return format!("expected {expected}, found unknown {what} {name}");
        }
    }
    if let Some(name) = message.strip_prefix("missing field ") {
        return format!("expected field {name}, found nothing");
    }
    if let Some(name) = message.strip_prefix("duplicate field ") {
        return format!("expected each field once, found field {name} twice");
    }
    format!("expected a valid value, found {message}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_messages_become_expected_found() {
        for (message, wanted) in [
            (
                "invalid type: string \"x\", expected u64",
                "expected u64, found string \"x\"",
            ),
            (
                "invalid value: integer `-1`, expected u16",
                "expected u16, found integer `-1`",
            ),
            (
                "unknown field `colour`, expected `name` or `description`",
                "expected `name` or `description`, found unknown field `colour`",
            ),
            (
                "unknown variant `explode`, expected one of `pause`, `heal`",
                "expected one of `pause`, `heal`, found unknown variant `explode`",
            ),
            (
                "unknown field `x`, there are no fields",
                "expected nothing here, found unknown field `x`",
            ),
            (
                "missing field `clients`",
                "expected field `clients`, found nothing",
            ),
            (
                "invalid length 3, expected a pair",
                "expected a pair, found length 3",
            ),
        ] {
            assert_eq!(reword_data(message), wanted);
        }
    }

    #[test]
    fn pointers_escape_tilde_and_slash() {
        let text = r#"{"a~b/c": [0, "x"]}"#;
        let mut json = serde_json::Deserializer::from_str(text);
        let result: Result<std::collections::BTreeMap<String, Vec<u8>>, _> =
            serde_path_to_error::deserialize(&mut json);
        assert_eq!(pointer(result.unwrap_err().path()), "/a~0b~1c/1");
    }
}
