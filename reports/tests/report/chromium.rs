//! The reports as a browser renders them: headless Chromium (Debian's `chromium`) loads each
//! report, runs its script, and dumps the resulting DOM, which must still have the verdict,
//! one lane per client, the overlap and the reproduction command — and no trace of hostile
//! markup having run. Screenshots land in `target/report-screenshots/` for people to look at.

use std::path::{Path, PathBuf};

use recipe_table::property::Violation;
use reports::{ReportOptions, render, write_atomic};
use trace::Trace;

use crate::fixtures::gc_pause;
use crate::headless;
use crate::hostile;

/// Where reports and screenshots of these tests go.
fn out_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).join("report-screenshots")
}

/// Runs Chromium headless on `page` with `args`, in a fresh profile; returns its stdout.
fn chromium(page: &Path, name: &str, args: &[&str]) -> String {
    let profile = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("chromium-profile-{name}"));
    headless::run(page, &profile, args)
}

/// Writes the report, screenshots it, and returns its rendered DOM.
fn rendered(
    name: &str,
    trace: &Trace,
    violations: &[Violation],
    options: &ReportOptions,
) -> String {
    let dir = out_dir();
    let page = dir.join(format!("{name}.html"));
    write_atomic(&page, render(trace, violations, options)).expect("report written");
    let page = page.canonicalize().expect("the report exists");
    for (suffix, size) in [("", "1400,1000"), ("-full", "1400,3400")] {
        let shot = dir.join(format!("{name}{suffix}.png"));
        chromium(
            &page,
            name,
            &[
                &format!("--screenshot={}", shot.display()),
                &format!("--window-size={size}"),
            ],
        );
        assert!(shot.exists(), "no screenshot at {}", shot.display());
    }
    chromium(&page, name, &["--dump-dom"])
}

/// The checks every rendered report must pass.
fn check_dom(dom: &str, command: &str) {
    let verdict = dom.find("id=\"verdict\"").expect("the verdict banner");
    assert!(
        dom[verdict..].contains("mutual_exclusion_belief"),
        "the violated property"
    );
    for lane in ["c0", "c1", "c2", "server"] {
        assert!(
            dom.contains(&format!("class=\"lane\" data-lane=\"{lane}\"")),
            "lane {lane}"
        );
    }
    assert!(dom.contains("class=\"overlap\""), "the overlap element");
    assert!(dom.contains(command), "the reproduction command {command}");
    assert!(
        dom.contains("data-tip=\""),
        "the page's script ran (hover details)"
    );
    assert!(
        dom.contains(" shown</span>"),
        "the page's script ran (table filter)"
    );
    let title = &dom[dom.find("<title>").unwrap() + 7..dom.find("</title>").unwrap()];
    assert_ne!(title, "PWNED", "a hostile script set the title");
    assert!(
        !dom.contains("data-pwned"),
        "a hostile handler marked the body"
    );
}

#[test]
#[ignore = "needs chromium; the README test command installs it"]
fn the_split_brain_report_renders_in_chromium() {
    for fenced in [true, false] {
        let (trace, violations) = gc_pause(fenced);
        let name = &trace.meta.scenario;
        let options = ReportOptions {
            trace_file: Some(format!("{name}.json")),
            rerun: None,
            focus: None,
        };
        let dom = rendered(name, &trace, &violations, &options);
        check_dom(&dom, &format!("splitbrain replay --from {name}.json"));
    }
}

#[test]
#[ignore = "needs chromium; the README test command installs it"]
fn hostile_strings_stay_text_in_chromium() {
    let (trace, violations, options) = hostile::trace();
    let dom = rendered("hostile", &trace, &violations, &options);
    // A user's recipe (its name is the hostile string): the report offers its test's rerun.
    check_dom(&dom, "SPLITBRAIN_SEED=1 cargo test -- &lt;script&gt;");
    assert!(
        dom.contains("&lt;script&gt;document.title='PWNED'&lt;/script&gt;"),
        "the script string is literal text"
    );
    assert!(
        dom.contains("&lt;img src=x onerror=\"document.body.dataset.pwned=1\"&gt;"),
        "the img string is literal text"
    );
}
