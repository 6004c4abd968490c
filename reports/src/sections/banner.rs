//! The verdict banner: which property broke, when, between whom — or that nothing did.

use std::fmt::{self, Write};

use recipe_table::property::Violation;

use crate::analysis::Run;
use crate::escape::Esc;
use crate::verdict;

/// Writes the banner.
pub(crate) fn write(out: &mut String, run: &Run, violations: &[Violation]) -> fmt::Result {
    let meta = &run.trace.meta;
    let Some((first, others)) = violations.split_first() else {
        return write!(
            out,
            "<header id=\"verdict\" class=\"verdict ok\"><div class=\"kicker\">NO VIOLATION</div>\
             <h1>The checkers found nothing wrong in this run</h1>\
             <p class=\"when\">{} · seed {} · {} events over {}</p></header>",
            Esc(&meta.scenario),
            meta.seed,
            run.trace.events.len(),
            run.clock.duration(run.end)
        );
    };
    let when = match first.until.filter(|&u| u > first.at) {
        Some(until) => format!("from {} to {}", run.clock.at(first.at), run.clock.at(until)),
        None => format!("at {}", run.clock.at(first.at)),
    };
    write!(
        out,
        "<header id=\"verdict\" class=\"verdict bad\"><div class=\"kicker\">VIOLATED · \
         <span class=\"prop\">{}</span></div><h1>{}</h1>\
         <p class=\"when\">{} · between <b>{}</b> · scenario <b>{}</b> · seed <b>{}</b></p>\
         <p class=\"message\">{}</p>",
        first.property,
        Esc(&verdict::headline(first, run.clock)),
        Esc(&when),
        Esc(&verdict::who(&first.clients)),
        Esc(&meta.scenario),
        meta.seed,
        Esc(&first.message)
    )?;
    if !others.is_empty() {
        write!(
            out,
            "<details class=\"others\"><summary>{} more violation{} in this run</summary><ul>",
            others.len(),
            if others.len() == 1 { "" } else { "s" }
        )?;
        for v in others {
            write!(
                out,
                "<li><b>{}</b> {} · {} — {}</li>",
                v.property,
                Esc(&run.clock.at(v.at)),
                Esc(&verdict::who(&v.clients)),
                Esc(&v.message)
            )?;
        }
        out.push_str("</ul></details>");
    }
    out.push_str("</header>");
    Ok(())
}
