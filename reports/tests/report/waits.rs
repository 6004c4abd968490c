//! A real ZooKeeper's deadlock, reported: Curator's semaphore-mutex lease loop as splitbrain's
//! clients ran it against ZooKeeper 3.8 (`splitbrain real semaphore-mutex-cut-at-lease-create
//! --start-local`, seed 0). A real trace has only the clients' side and the tree read at the
//! end, and that is enough to tell who waits for whom.

use reports::{ReportOptions, render};
use trace::Trace;

/// The text of the element with `id`, its markup dropped.
fn text_of(html: &str, id: &str) -> String {
    let start = html.find(&format!("id=\"{id}\"")).expect(id);
    let end = start + html[start..].find("</section>").expect("its end");
    let mut text = String::new();
    let mut markup = false;
    for c in html[start..end].chars() {
        match c {
            '<' => markup = true,
            '>' => markup = false,
            _ if !markup => text.push(c),
            _ => {}
        }
    }
    text.replace("&#39;", "'")
}

#[test]
fn a_real_deadlock_leads_with_the_hang_and_draws_the_cycle() {
    let file = "fixtures/real-semaphore-mutex-deadlock.trace.json";
    let text = include_str!("../fixtures/real-semaphore-mutex-deadlock.trace.json");
    let trace = Trace::from_json(file, text).expect("the fixture reads");
    let violations = properties::verdict::violations(&trace).expect("its run spec judges it");
    let html = render(&trace, &violations, &ReportOptions::default());
    assert!(html.contains("<span class=\"prop\">progress</span>"));
    let waits = text_of(&html, "waits");
    let leases = "the children of /locks/semaphore-mutex-cut-at-lease-create/leases";
    for beat in [
        format!("c0 waits (since t=1.391s) for a change to {leases}"),
        "whose children are lease-0000000003 (c1's session 0x100028157d80004) and \
         lease-0000000002 (c0's own session 0x100028157d80003) — c1 itself waits"
            .to_owned(),
        "the same children → back to c0: a cycle".to_owned(),
        "c2 waits (since t=1.731s) for a change to lock-0000000003 (data watch left at \
         t=1.736s), created by c0's session 0x100028157d80003 — c0 itself waits"
            .to_owned(),
    ] {
        assert!(waits.contains(&beat), "{beat}\n{waits}");
    }
}
