//! The report's sections, top to bottom. Each writes itself into the page from the digested
//! [`crate::analysis::Run`]; none of them writes a trace string without [`crate::escape::Esc`].

pub(crate) mod banner;
pub(crate) mod meta;
pub(crate) mod repro;
pub(crate) mod schedule;
pub(crate) mod story;
pub(crate) mod table;
pub(crate) mod timeline;
pub(crate) mod waits;
