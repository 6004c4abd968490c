//! The command line's reference page (`book/src/reference/cli.md`) holds one table of options
//! per command, generated from the commands' own definitions: the test below fails when a
//! table differs from what the code says, and rewrites the page when `SPLITBRAIN_BLESS=1`.

use clap::{Arg, ArgAction, Command};

/// The page, relative to the package.
const PAGE: &str = "book/src/reference/cli.md";

/// Begins a generated table: `<!-- options: COMMAND -->`.
const BEGIN: &str = "<!-- options: ";

/// Ends a generated table.
const END: &str = "<!-- end options -->";

/// How an argument is written: `--name VALUE`, `-o, --out FILE`, `NAME`, `NAME…`.
fn usage(arg: &Arg) -> String {
    let values = || -> String {
        let names: Vec<String> = arg
            .get_value_names()
            .map(|names| names.iter().map(|n| n.to_string()).collect())
            .unwrap_or_else(|| vec![arg.get_id().as_str().to_uppercase()]);
        let many = matches!(arg.get_action(), ArgAction::Append)
            || arg.get_num_args().is_some_and(|n| n.max_values() > 1);
        names.join(" ")
            + if many && arg.is_positional() {
                "…"
            } else {
                ""
            }
    };
    if arg.is_positional() {
        return values();
    }
    let mut written = String::new();
    if let Some(short) = arg.get_short() {
        written.push_str(&format!("-{short}, "));
    }
    if let Some(long) = arg.get_long() {
        written.push_str(&format!("--{long}"));
    }
    if arg.get_action().takes_values() {
        written.push(' ');
        written.push_str(&values());
    }
    written
}

/// What an argument means: its help, its choices and its default.
fn meaning(arg: &Arg) -> String {
    let mut text = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
    let choices: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    if arg.get_action().takes_values() && !choices.is_empty() {
        text.push_str(&format!(" (one of {})", choices.join(", ")));
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if arg.get_action().takes_values() && !defaults.is_empty() {
        text.push_str(&format!(" [default: {}]", defaults.join(",")));
    }
    markdown(&text)
}

/// `text` as markdown table cell text: its code spans as they are, the rest with the
/// characters markdown would read as markup (`<tag>`, `*emphasis*`, a cell's `|`) escaped.
fn markdown(text: &str) -> String {
    let mut out = String::new();
    for (index, part) in text.split('`').enumerate() {
        if index > 0 {
            out.push('`');
        }
        if index % 2 == 1 {
            out.push_str(&part.replace('|', "\\|"));
            continue;
        }
        for c in part.chars() {
            match c {
                '<' => out.push_str("&lt;"),
                '>' => out.push_str("&gt;"),
                '*' | '|' => {
                    out.push('\\');
                    out.push(c);
                }
                c => out.push(c),
            }
        }
    }
    out
}

/// The table of `command`'s arguments, as markdown.
fn table(command: &Command) -> String {
    let mut out = String::from("| argument | meaning |\n| --- | --- |\n");
    for arg in command.get_arguments() {
        if arg.is_hide_set() || matches!(arg.get_id().as_str(), "help" | "version") {
            continue;
        }
        out.push_str(&format!("| `{}` | {} |\n", usage(arg), meaning(arg)));
    }
    out
}

/// `page` with every generated table as `root`'s commands define it; an error names a marker
/// with no command or no end.
fn regenerate(page: &str, root: &Command) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = page;
    while let Some(at) = rest.find(BEGIN) {
        let line_end = at
            + rest[at..]
                .find('\n')
                .ok_or("a marker line without an end")?;
        let name = rest[at + BEGIN.len()..line_end]
            .trim_end_matches(" -->")
            .trim();
        let command = root
            .find_subcommand(name)
            .ok_or_else(|| format!("{PAGE}: `{name}`: expected a command of splitbrain"))?;
        let end = rest[line_end..]
            .find(END)
            .ok_or_else(|| format!("{PAGE}: `{name}`: expected `{END}` after its table"))?;
        out.push_str(&rest[..=line_end]);
        out.push_str(&table(command));
        rest = &rest[line_end + end..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_reference_tables_are_the_commands_own() {
        let root = crate::Cli::command();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(PAGE);
        let page = std::fs::read_to_string(&path).expect("the page");
        let generated = regenerate(&page, &root).unwrap_or_else(|e| panic!("{e}"));
        if std::env::var_os("SPLITBRAIN_BLESS").is_some() {
            std::fs::write(&path, &generated).expect("write the page");
            return;
        }
        let visible: Vec<&str> = (root.get_subcommands())
            .filter(|c| !c.is_hide_set())
            .map(|c| c.get_name())
            .collect();
        for name in visible {
            assert!(
                page.contains(&format!("{BEGIN}{name} -->")),
                "{PAGE}: expected a table of `{name}`'s options"
            );
        }
        assert!(
            page == generated,
            "{PAGE}: a table of options differs from the command's definition: rerun with \
             SPLITBRAIN_BLESS=1 to rewrite it"
        );
    }

    #[test]
    fn a_marker_names_a_command_and_ends() {
        let root = crate::Cli::command();
        let unknown = regenerate("<!-- options: nope -->\n<!-- end options -->\n", &root);
        assert!(unknown.unwrap_err().contains("`nope`"));
        let open = regenerate("<!-- options: hunt -->\n| old |\n", &root);
        assert!(
            open.unwrap_err()
                .contains("expected `<!-- end options -->`")
        );
        let done = regenerate(
            "a\n<!-- options: report -->\nold\n<!-- end options -->\nb\n",
            &root,
        )
        .expect("regenerates");
        assert!(done.starts_with("a\n<!-- options: report -->\n| argument | meaning |\n"));
        assert!(done.ends_with("|\n<!-- end options -->\nb\n"), "{done}");
    }

    #[test]
    fn markup_outside_code_is_escaped() {
        assert_eq!(
            markdown("<N>.json, *.json, `a|<b>` x|y"),
            "&lt;N&gt;.json, \\*.json, `a\\|<b>` x\\|y"
        );
    }
}
