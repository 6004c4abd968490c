//! The HTML document around the sections: head (title, inline CSS, a Content-Security-Policy
//! that forbids every network fetch and any script but the page's own), the top navigation,
//! and the inline script at the end.

use std::fmt::{self, Write};

use crate::escape::Esc;

/// The report's stylesheet.
pub(crate) const CSS: &str = include_str!("assets/report.css");
/// The report's script.
pub(crate) const JS: &str = include_str!("assets/report.js");

/// The script's SHA-256 in the CSP's base64 form (a unit test keeps it current).
const JS_SHA256: &str = "UxHPj2IGRUHz6b4DpYK+KC4WPd9vV9+mVRt7NBTYBdM=";

/// Writes the document head and opens `<main>`; `nav` lists `(anchor, label)` links.
pub(crate) fn open(out: &mut String, title: &str, nav: &[(&str, &str)]) -> fmt::Result {
    write!(
        out,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'sha256-{JS_SHA256}'; img-src data:\">\
         <title>{}</title><style>{CSS}</style></head><body><nav class=\"top\"><b>splitbrain</b>",
        Esc(title)
    )?;
    for (anchor, label) in nav {
        write!(out, "<a href=\"#{anchor}\">{label}</a>")?;
    }
    out.push_str("</nav><main>");
    Ok(())
}

/// Closes `<main>`, adds the footer and the script, and ends the document.
pub(crate) fn close(out: &mut String, footer: &str) -> fmt::Result {
    writeln!(
        out,
        "<footer>{}</footer></main><script>{JS}</script></body></html>",
        Esc(footer)
    )
}

#[cfg(test)]
mod tests {
    use base64::Engine;
    use sha2::{Digest, Sha256};

    use super::*;

    #[test]
    fn the_csp_hash_is_the_scripts() {
        let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(JS));
        assert_eq!(
            JS_SHA256, hash,
            "the script changed: set JS_SHA256 to {hash} or the browser will not run it"
        );
    }
}
