//! HTML escaping. Every string that comes from a trace — names, paths, node data, settings,
//! checker messages, and any text derived from them — reaches the page through [`Esc`], in
//! element text and in attribute values alike. Markup literals written by this crate are the
//! only unescaped text in a report.

use std::fmt;

/// Displays a string with `& < > " '` replaced by character references, so that it is
/// literal text both between tags and inside a quoted attribute value.
pub(crate) struct Esc<'a>(pub &'a str);

impl fmt::Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(at) = rest.find(['&', '<', '>', '"', '\'']) {
            f.write_str(&rest[..at])?;
            f.write_str(match rest.as_bytes()[at] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => "&#39;",
            })?;
            rest = &rest[at + 1..];
        }
        f.write_str(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_characters_become_references() {
        let hostile = r#"<img src=x onerror="document.body.dataset.pwned=1"> & 'x'"#;
        assert_eq!(
            Esc(hostile).to_string(),
            "&lt;img src=x onerror=&quot;document.body.dataset.pwned=1&quot;&gt; &amp; &#39;x&#39;"
        );
    }

    #[test]
    fn plain_text_is_unchanged() {
        assert_eq!(
            Esc("c0 acquired, token 37 — ok").to_string(),
            "c0 acquired, token 37 — ok"
        );
    }
}
