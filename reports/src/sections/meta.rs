//! Run metadata: what ran, from which build, with which settings.

use std::fmt::{self, Write};

use trace::Source;

use crate::analysis::Run;
use crate::escape::Esc;

/// Writes the section.
pub(crate) fn write(out: &mut String, run: &Run) -> fmt::Result {
    let meta = &run.trace.meta;
    let source = match meta.source {
        Source::Sim => "simulator (madsim), simulated time",
        Source::Model => "model checker (stateright), time in steps",
        Source::Real => "real ZooKeeper, real time",
    };
    let settings = serde_json::to_string_pretty(&meta.settings).unwrap_or_default();
    write!(
        out,
        "<section id=\"metadata\"><h2>Run metadata</h2><dl class=\"meta\">\
         <dt>scenario</dt><dd>{}</dd><dt>seed</dt><dd>{}</dd><dt>source</dt><dd>{source}</dd>\
         <dt>recipe</dt><dd>{}</dd><dt>clients</dt><dd>{}</dd><dt>build</dt><dd>{}</dd>\
         <dt>events</dt><dd>{} over {}</dd></dl>\
         <details open><summary>settings</summary><pre class=\"settings\">{}</pre></details></section>",
        Esc(&meta.scenario),
        meta.seed,
        Esc(meta.recipe.name()),
        meta.clients,
        Esc(&meta.build),
        run.trace.events.len(),
        Esc(&run.clock.duration(run.end)),
        Esc(&settings)
    )
}
