//! Every section a reader relies on is in the page, found by its id or class rather than by
//! comparing bytes, so that style changes do not break these tests but a lost section does.

use recipe_table::property::Property;
use reports::{ReportOptions, render};

use crate::fixtures::gc_pause;

fn options() -> ReportOptions {
    ReportOptions {
        trace_file: Some("target/traces/gc-pause-split-brain-42.json".to_owned()),
        rerun: None,
        focus: None,
    }
}

/// The text between `<tag ... id="id"` and the next `</tag>`.
fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no element with id {id}"));
    let end = html[start..]
        .find("</section>")
        .map_or(html.len(), |e| start + e);
    &html[start..end]
}

#[test]
fn the_checkers_find_the_fixture_split_brain() {
    let (_, violations) = gc_pause(false);
    let properties: Vec<Property> = violations.iter().map(|v| v.property).collect();
    assert!(
        properties.contains(&Property::MutualExclusionBelief),
        "{violations:?}"
    );
    assert!(
        properties.contains(&Property::MutualExclusionFenced),
        "{violations:?}"
    );
    let (_, fenced) = gc_pause(true);
    let properties: Vec<Property> = fenced.iter().map(|v| v.property).collect();
    assert_eq!(properties, [Property::MutualExclusionBelief], "{fenced:?}");
}

#[test]
fn the_verdict_names_the_property_the_clients_and_the_interval() {
    let (trace, violations) = gc_pause(true);
    let html = render(&trace, &violations, &options());
    let banner = section(&html, "verdict");
    assert!(banner.contains("class=\"verdict bad\""));
    assert!(banner.contains("mutual_exclusion_belief"));
    assert!(banner.contains("c0 and c1"), "{banner}");
    assert!(banner.contains("from t=18.200s to t=20.010s"), "{banner}");
}

#[test]
fn a_clean_run_gets_a_clean_verdict() {
    let (trace, _) = gc_pause(true);
    let html = render(&trace, &[], &options());
    assert!(section(&html, "verdict").contains("class=\"verdict ok\""));
    assert!(!html.contains("class=\"overlap\""));
}

#[test]
fn the_reproduction_commands_are_there_with_copy_buttons() {
    let (trace, violations) = gc_pause(true);
    let html = render(&trace, &violations, &options());
    let repro = section(&html, "repro");
    assert!(repro.contains("splitbrain replay --from target/traces/gc-pause-split-brain-42.json"));
    assert!(repro.contains("splitbrain replay gc-pause-fenced --seed 42"));
    assert_eq!(repro.matches("class=\"copy\"").count(), 2);
}

#[test]
fn a_shrunk_schedule_is_only_replayed_from_the_trace() {
    let (mut trace, violations) = gc_pause(true);
    trace.meta.shrunk_from = Some(Vec::new());
    let html = render(&trace, &violations, &options());
    let repro = section(&html, "repro");
    assert!(repro.contains("replay --from"));
    assert!(!repro.contains("--seed"));
    assert!(section(&html, "schedule").contains("shrunk"));
}

#[test]
fn a_model_trace_is_reproduced_by_its_checker_path() {
    let (mut trace, violations) = gc_pause(true);
    trace.meta.source = trace::Source::Model;
    trace.meta.settings = serde_json::json!({ "path": "0/3/1", "unfenced": true });
    let html = render(&trace, &violations, &options());
    let repro = section(&html, "repro");
    assert!(
        repro.contains("splitbrain check mutex --clients 3 --unfenced --path 0/3/1"),
        "{repro}"
    );
    assert!(!repro.contains("splitbrain replay"));
}

#[test]
fn the_timeline_has_one_lane_per_client_and_the_server() {
    let (trace, violations) = gc_pause(true);
    let html = render(&trace, &violations, &options());
    let timeline = section(&html, "timeline");
    for lane in ["c0", "c1", "c2", "server"] {
        let marker = format!("class=\"lane\" data-lane=\"{lane}\"");
        // Once in the zoomed view, once in the whole run.
        assert_eq!(timeline.matches(&marker).count(), 2, "lane {lane}");
    }
    assert_eq!(timeline.matches("class=\"lane\"").count(), 8);
}

#[test]
fn the_timeline_draws_the_overlap_the_pause_the_expiry_and_the_rejection() {
    let (trace, violations) = gc_pause(true);
    let html = render(&trace, &violations, &options());
    // Drawn shapes carry the event they stand for; the legend's samples do not.
    let timeline = section(&html, "timeline");
    assert!(timeline.contains("class=\"overlap\""));
    assert!(timeline.contains("c0 + c1 both hold"));
    assert!(timeline.contains("class=\"fault f-pause\" data-e="));
    assert!(timeline.contains("GC pause 8.000s"));
    assert!(
        timeline.contains("class=\"unnoticed\" data-e="),
        "the expiry c0 did not see"
    );
    assert!(
        timeline.contains("class=\"zombie\" data-e="),
        "c0's hold after its expiry"
    );
    assert!(timeline.contains("class=\"acc rejected\" data-e="));
    assert!(timeline.contains("token 4"), "tokens on the holding bars");
    assert!(
        timeline.contains("c0&#39;s session expired"),
        "the expiry on the server lane"
    );
}

#[test]
fn the_unfenced_timeline_marks_the_lost_update() {
    let (trace, violations) = gc_pause(false);
    let html = render(&trace, &violations, &options());
    let timeline = section(&html, "timeline");
    assert!(timeline.contains("class=\"acc lost\" data-e="));
    assert!(!timeline.contains("class=\"acc rejected\" data-e="));
}

#[test]
fn the_story_tells_the_split_brain_in_order() {
    let (trace, violations) = gc_pause(true);
    let html = render(&trace, &violations, &options());
    let story = section(&html, "story");
    let beats = [
        "c0 acquired the lock with token",
        "c0 is paused (GC) for 8.000s",
        "c0&#39;s session 0x1000 expired on the server",
        "its node lock-0000000006 is deleted",
        "c0 is paused and cannot know",
        "c1 acquired the lock with token",
        "while c0 still believes it holds token",
        "both believe they hold the lock",
        "c0 resumes",
        "c0 wrote 4 with token",
        "REJECTED: the resource had already accepted token",
    ];
    let mut from = 0;
    for beat in beats {
        let at = story[from..]
            .find(beat)
            .unwrap_or_else(|| panic!("story lacks, or has out of order: {beat}\n{story}"));
        from += at;
    }
}

#[test]
fn the_event_table_has_every_event_and_a_filter_per_client() {
    let (trace, violations) = gc_pause(true);
    let html = render(&trace, &violations, &options());
    let table = section(&html, "events");
    assert_eq!(table.matches("<tr data-c=").count(), trace.events.len());
    for key in ["0", "1", "2", "s"] {
        assert!(
            table.contains(&format!("data-client=\"{key}\"")),
            "filter {key}"
        );
    }
    assert!(table.contains("id=\"only-hot\""));
    assert!(
        table.contains("class=\"x h\""),
        "the violation's events are marked"
    );
}

#[test]
fn the_schedule_and_metadata_are_there() {
    let (trace, violations) = gc_pause(true);
    let html = render(&trace, &violations, &options());
    assert!(section(&html, "schedule").contains("c0 paused (GC) for 8.000s"));
    let meta = section(&html, "metadata");
    for fact in [
        "gc-pause-fenced",
        "42",
        "splitbrain 0.1.0 (fixture)",
        "mutex",
        "session_timeout_ms",
    ] {
        assert!(meta.contains(fact), "metadata lacks {fact}");
    }
}

#[test]
fn the_page_fetches_nothing_and_runs_only_its_own_script() {
    let (trace, violations) = gc_pause(true);
    let html = render(&trace, &violations, &options());
    assert!(html.contains("default-src 'none'"));
    assert_eq!(html.matches("<script").count(), 1);
    for external in ["src=\"http", "href=\"http", "@import", "url(http", "<link"] {
        assert!(!html.contains(external), "{external}");
    }
}
