//! Hostile trace strings reach the page as literal text only.

use recipe_table::property::{Property, Violation};
use reports::{ReportOptions, render};
use trace::build::Build;

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

#[test]
fn a_hangs_waits_name_hostile_paths_as_literal_text() {
    let dir = format!("/locks/{IMG}");
    let node = format!("{dir}/lock-1");
    let trace = Build::new()
        .connected(0, 7)
        .connected(1, 8)
        .acquire(0)
        .acquire(1)
        .created(7, &node, Some(7), 3)
        .listing(1, 1, &dir, 3)
        .watching(0, 1, &node, 3)
        .trace();
    let hang = Violation {
        property: Property::Progress,
        at: 0,
        until: None,
        clients: Vec::new(),
        events: Vec::new(),
        message: SCRIPT.to_owned(),
    };
    let html = render(&trace, &[hang], &ReportOptions::default());
    assert!(
        !html.contains(IMG) && !html.contains("<img"),
        "markup in the page"
    );
    let start = html.find("id=\"waits\"").expect("the waits section");
    let waits = &html[start..start + html[start..].find("</section>").expect("its end")];
    let img = "&lt;img src=x onerror=&quot;document.body.dataset.pwned=1&quot;&gt;";
    assert!(
        waits.contains(&format!("for a change to the children of /locks/{img} ")),
        "{waits}"
    );
}
