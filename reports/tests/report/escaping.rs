//! Hostile trace strings reach the page as literal text only.

use reports::render;

use crate::hostile::{self, IMG, SCRIPT};

#[test]
fn hostile_strings_appear_escaped_and_never_as_markup() {
    let (trace, violations, options) = hostile::trace();
    let html = render(&trace, &violations, &options);
    assert!(
        !html.contains(SCRIPT),
        "the script tag is in the page as markup"
    );
    assert!(
        !html.contains("<img"),
        "the img tag is in the page as markup"
    );
    assert!(
        !html.contains("onerror=\""),
        "an event handler attribute is in the page"
    );
    assert_eq!(
        html.matches("<script").count(),
        1,
        "only the page's own script"
    );
    let script = "&lt;script&gt;document.title=&#39;PWNED&#39;&lt;/script&gt;";
    let img = "&lt;img src=x onerror=&quot;document.body.dataset.pwned=1&quot;&gt;";
    for (section, needle) in [
        ("verdict", script),
        ("verdict", img),
        ("repro", "&lt;script&gt;document.title="),
        ("timeline", img),
        ("events", script),
        ("events", img),
        ("metadata", script),
        ("metadata", img),
    ] {
        let start = html.find(&format!("id=\"{section}\"")).expect(section);
        let end = html[start..]
            .find("</section>")
            .map_or(html.len(), |e| start + e);
        assert!(
            html[start..end].contains(needle),
            "{section} lacks the literal {needle}"
        );
    }
    let title = &html[html.find("<title>").unwrap()..html.find("</title>").unwrap()];
    assert!(
        title.contains(script),
        "the scenario name is literal in the title: {title}"
    );
    assert!(!html.contains(IMG));
}
