//! The few SVG shapes the timeline draws. Text and hover details pass through [`Esc`];
//! class names are this crate's own literals.

use std::fmt::{self, Write};

use crate::escape::Esc;

/// What a shape links to and says when hovered.
#[derive(Clone, Copy, Default)]
pub(crate) struct Hover<'a> {
    /// The hover text (becomes the shape's `<title>`).
    pub tip: Option<&'a str>,
    /// The trace event it stands for (clicking scrolls the event table to it).
    pub event: Option<usize>,
}

/// Rectangles narrower than this (in user units) carry no hover text.
const MIN_HOVER_WIDTH: f64 = 3.0;

/// Writes SVG into a page.
pub(crate) struct Svg<'a> {
    out: &'a mut String,
}

impl<'a> Svg<'a> {
    /// Writes into `out`.
    pub(crate) fn new(out: &'a mut String) -> Svg<'a> {
        Svg { out }
    }

    /// Raw markup written by this crate (never trace text).
    pub(crate) fn raw(&mut self, markup: &str) {
        self.out.push_str(markup);
    }

    /// The opening tag of a shape with its class and link, then its title.
    fn open(&mut self, tag: &str, class: &str, hover: Hover<'_>) -> fmt::Result {
        write!(self.out, "<{tag} class=\"{class}\"")?;
        if let Some(event) = hover.event {
            write!(self.out, " data-e=\"{event}\"")?;
        }
        Ok(())
    }

    /// Closes a shape opened by [`Svg::open`], with its title.
    fn close(&mut self, tag: &str, hover: Hover<'_>) -> fmt::Result {
        match hover.tip {
            Some(tip) => write!(self.out, "><title>{}</title></{tag}>", Esc(tip)),
            None => self.out.write_str("/>"),
        }
    }

    /// A rectangle. One narrower than [`MIN_HOVER_WIDTH`] gets no hover text (in a long
    /// run's overview there are thousands, too thin to point at); clicking it still finds
    /// its event.
    pub(crate) fn rect(
        &mut self,
        (x, y, w, h): (f64, f64, f64, f64),
        class: &str,
        mut hover: Hover<'_>,
    ) -> fmt::Result {
        if w < MIN_HOVER_WIDTH {
            hover.tip = None;
        }
        self.open("rect", class, hover)?;
        write!(
            self.out,
            " x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{h:.1}\"",
            w.max(1.0)
        )?;
        self.close("rect", hover)
    }

    /// A line.
    pub(crate) fn line(
        &mut self,
        (x1, y1): (f64, f64),
        (x2, y2): (f64, f64),
        class: &str,
    ) -> fmt::Result {
        write!(
            self.out,
            "<line class=\"{class}\" x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\"/>"
        )
    }

    /// A closed polygon through `points`.
    pub(crate) fn polygon(
        &mut self,
        points: &[(f64, f64)],
        class: &str,
        hover: Hover<'_>,
    ) -> fmt::Result {
        self.open("polygon", class, hover)?;
        self.out.push_str(" points=\"");
        for (i, (x, y)) in points.iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            write!(self.out, "{sep}{x:.1},{y:.1}")?;
        }
        self.out.push('"');
        self.close("polygon", hover)
    }

    /// A circle.
    pub(crate) fn circle(
        &mut self,
        (cx, cy): (f64, f64),
        r: f64,
        class: &str,
        hover: Hover<'_>,
    ) -> fmt::Result {
        self.open("circle", class, hover)?;
        write!(self.out, " cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"{r:.1}\"")?;
        self.close("circle", hover)
    }

    /// Text with its baseline at `(x, y)`.
    pub(crate) fn text(&mut self, (x, y): (f64, f64), class: &str, text: &str) -> fmt::Result {
        write!(
            self.out,
            "<text class=\"{class}\" x=\"{x:.1}\" y=\"{y:.1}\">{}</text>",
            Esc(text)
        )
    }
}

/// Roughly how wide `text` is at the timeline's 11px font.
pub(crate) fn text_width(text: &str) -> f64 {
    text.chars().count() as f64 * 6.3
}
