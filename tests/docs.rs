//! The documentation check: the README, ARCHITECTURE.md, CONTRIBUTING.md, CHANGELOG.md and
//! every page of the book (`book/src/**/*.md`) are checked for
//!
//! - relative links that lead nowhere: `[text](path)` and `[text](path#anchor)` must name a
//!   file or directory of the repository, and an anchor must name a heading of the Markdown
//!   file it points into (mdBook's rule: lowercase, whitespace to `-`, punctuation other than
//!   `-` and `_` dropped; a repeated heading gets `-1`, `-2`, ...);
//! - a book summary out of step with the book: every `book/src/SUMMARY.md` entry must exist,
//!   and every page must be in the summary;
//! - backticked repository paths that do not exist (`coordination/src/recipes/mutex.rs`,
//!   `scripts/test`, `recipes/queue.rs`): see [`looks_like_a_path`] for what counts as one and
//!   [`resolves`] for how it is found;
//! - text a user should not read: an issue number, a work log's "this stop", a reference to a
//!   document outside the repository;
//! - code blocks that would not be tested as meant: every fence names its language (a bare
//!   fence is compiled as Rust by rustdoc), and every page with a `rust` block is compiled as a
//!   doc test (listed in `testing/src/lib.rs`).
//!
//! Each failure names the file, the line and what is wrong. The check needs nothing outside
//! the repository and walks it in a fixed order.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Directories the repository index leaves out: build output, git's own, generated books and
/// hunt output.
const NOT_INDEXED: [&str; 5] = [
    ".git",
    "target",
    "book/book",
    "splitbrain-out",
    "node_modules",
];

/// Backticked paths that are outputs, placeholders or paths in users' own crates, not files of
/// this repository. Prefixes end with `/`; other entries are whole file names.
const NOT_REPOSITORY_PATHS: [&str; 14] = [
    // Where commands write (git-ignored).
    "splitbrain-out/",
    "target/",
    // Files the commands write, named without their directory.
    "summary.json",
    "bench.json",
    "bench.md",
    "bench-real.json",
    "bench-real.md",
    "fidelity.json",
    "fidelity.md",
    "findings.json",
    "findings.md",
    // Placeholders for a user's own files in examples of commands.
    "trace.json",
    "my-scenario.json",
    "report.json",
];

/// Extensions that make a backticked token a file path even without a `/`.
const PATH_EXTENSIONS: [&str; 8] = [
    ".rs", ".toml", ".json", ".md", ".sh", ".yaml", ".yml", ".java",
];

/// Text no page may contain, and why (matched case-insensitively unless the pattern has
/// capitals, which are matched as written).
const BANNED: [(&str, &str); 4] = [
    ("this stop", "a work log's wording"),
    ("DESIGN", "a design document the repository does not ship"),
    ("ANCHORS.md", "a file the repository does not have"),
    ("../shared", "a directory outside the repository"),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file and directory of the repository, as `/`-separated paths relative to its root.
fn repository_index(root: &Path) -> BTreeSet<String> {
    let mut index = BTreeSet::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let entries = fs::read_dir(root.join(&relative))
            .unwrap_or_else(|error| panic!("reading {}: {error}", relative.display()));
        let mut names: Vec<_> = entries
            .map(|entry| entry.expect("a directory entry").file_name())
            .collect();
        names.sort();
        for name in names {
            let path = relative.join(&name);
            let text = path.to_string_lossy().replace('\\', "/");
            if NOT_INDEXED.contains(&text.as_str()) {
                continue;
            }
            if root.join(&path).is_dir() {
                pending.push(path);
            }
            index.insert(text);
        }
    }
    index
}

/// The documents checked: the four top-level ones and every book page, in path order.
fn documents(index: &BTreeSet<String>) -> Vec<String> {
    let mut documents: Vec<String> = [
        "README.md",
        "ARCHITECTURE.md",
        "CONTRIBUTING.md",
        "CHANGELOG.md",
    ]
    .iter()
    .map(|name| name.to_string())
    .collect();
    documents.extend(
        index
            .iter()
            .filter(|path| path.starts_with("book/src/") && path.ends_with(".md"))
            .cloned(),
    );
    documents
}

/// One line of a document with what the checks need: its number, its text, whether it lies in
/// a fenced code block, and the fence's language when it opens one.
struct Line<'a> {
    number: usize,
    text: &'a str,
    in_code: bool,
    opens_fence: Option<&'a str>,
}

fn lines(text: &str) -> Vec<Line<'_>> {
    let mut in_code = false;
    let mut out = Vec::new();
    for (i, text) in text.lines().enumerate() {
        let trimmed = text.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            let opens = !in_code;
            out.push(Line {
                number: i + 1,
                text,
                in_code: true,
                opens_fence: opens.then_some(info.trim()),
            });
            in_code = !in_code;
            continue;
        }
        out.push(Line {
            number: i + 1,
            text,
            in_code,
            opens_fence: None,
        });
    }
    out
}

/// The inline code spans of a line (the text between single backticks).
fn code_spans(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

/// The line without its inline code spans.
fn without_code_spans(line: &str) -> String {
    line.split('`').step_by(2).collect::<Vec<_>>().join("")
}

/// The targets of the Markdown links of a line, outside code spans.
fn link_targets(line: &str) -> Vec<String> {
    let text = without_code_spans(line);
    let mut targets = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after
            .find(|c: char| c == ')' || c.is_whitespace())
            .unwrap_or(after.len());
        targets.push(after[..end].to_string());
        rest = &after[end..];
    }
    targets
}

/// mdBook's id of a heading's text.
fn slug(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_lowercase().next().unwrap_or(c))
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// A heading's text as rendered: links by their text, no code or emphasis marks.
fn heading_text(raw: &str) -> String {
    let mut text = String::new();
    let mut rest = raw.trim().trim_end_matches('#').trim();
    while let Some(open) = rest.find('[') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match (after.find("]("), after.find(')')) {
            (Some(close), Some(end)) if close < end => {
                text.push_str(&after[..close]);
                rest = &after[end + 1..];
            }
            _ => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text.replace(['`', '*'], "")
}

/// The anchors of a Markdown file's headings.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut anchors = BTreeSet::new();
    for line in lines(text) {
        if line.in_code {
            continue;
        }
        let hashes = line.text.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line.text[hashes..].starts_with(' ') {
            continue;
        }
        let id = slug(&heading_text(&line.text[hashes..]));
        let count = seen.entry(id.clone()).or_insert(0);
        anchors.insert(if *count == 0 {
            id
        } else {
            format!("{id}-{count}")
        });
        *count += 1;
    }
    anchors
}

/// `a/b/../c` as `a/c`; `None` when it climbs out of the repository.
fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')
}

/// Whether a backticked token names a file of the repository rather than something else
/// (`0..200`, `I/N`, `T/3`, `coordination::driver`, `--out DIR`, `scenarios/catalog/*.json`): it is
/// relative and made of path characters only, and it either ends with a file extension of
/// [`PATH_EXTENSIONS`], ends with `/`, starts with a top-level entry of the repository, or is
/// all lowercase segments with a `/`, one of them at least three characters long.
fn looks_like_a_path(token: &str, top_level: &BTreeSet<String>) -> bool {
    if token.is_empty()
        || token.starts_with('/')
        || token.starts_with('-')
        || !token.chars().all(is_path_char)
        || token.chars().all(|c| c == '.' || c == '/')
    {
        return false;
    }
    if PATH_EXTENSIONS
        .iter()
        .any(|ext| token.ends_with(ext) && token.len() > ext.len())
    {
        return true;
    }
    if !token.contains('/') {
        return false;
    }
    let first = token.split('/').next().unwrap_or_default();
    token.ends_with('/')
        || top_level.contains(first)
        || (token.split('/').all(|segment| {
            segment.chars().all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-' | '.')
            })
        }) && token.split('/').any(|segment| segment.len() >= 3))
}

/// Whether a path token names a file or directory of the repository: from the root
/// (`coordination/src/recipes/mutex.rs`), or as the tail of a path (`recipes/queue.rs`, `framework.rs`,
/// `monitor/`), or is one of [`NOT_REPOSITORY_PATHS`].
fn resolves(token: &str, index: &BTreeSet<String>) -> bool {
    if NOT_REPOSITORY_PATHS.iter().any(|allowed| {
        if allowed.ends_with('/') {
            token.starts_with(allowed)
        } else {
            token == *allowed
        }
    }) {
        return true;
    }
    let Some(path) = normalize(token) else {
        return false;
    };
    let tail = format!("/{path}");
    index.contains(&path) || index.iter().any(|entry| entry.ends_with(&tail))
}

/// "issue 12", "issues 12 and 13", "Issue 14": an issue number, at `at` in `lower`.
fn cites_an_issue(lower: &str) -> bool {
    ["issue ", "issues ", "issue #", "issue-"]
        .iter()
        .any(|word| {
            lower.match_indices(word).any(|(at, _)| {
                let before_is_word = lower[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric());
                !before_is_word
                    && lower[at + word.len()..]
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_digit())
            })
        })
}

struct Checker {
    root: PathBuf,
    index: BTreeSet<String>,
    top_level: BTreeSet<String>,
    anchors: BTreeMap<String, BTreeSet<String>>,
    failures: Vec<String>,
}

impl Checker {
    fn new() -> Checker {
        let root = root();
        let index = repository_index(&root);
        let top_level = index
            .iter()
            .filter(|path| !path.contains('/'))
            .cloned()
            .collect();
        Checker {
            root,
            index,
            top_level,
            anchors: BTreeMap::new(),
            failures: Vec::new(),
        }
    }

    fn read(&self, path: &str) -> String {
        fs::read_to_string(self.root.join(path)).unwrap_or_else(|error| panic!("{path}: {error}"))
    }

    fn fail(&mut self, file: &str, line: usize, what: String) {
        self.failures.push(format!("{file}:{line}: {what}"));
    }

    fn anchors_of(&mut self, path: &str) -> &BTreeSet<String> {
        if !self.anchors.contains_key(path) {
            let found = anchors(&self.read(path));
            self.anchors.insert(path.to_string(), found);
        }
        &self.anchors[path]
    }

    fn check_links(&mut self, file: &str, line: &Line<'_>) {
        let dir = file.rsplit_once('/').map_or("", |(dir, _)| dir);
        for target in link_targets(line.text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() {
                Some(file.to_string())
            } else if path.starts_with('/') {
                None
            } else {
                normalize(&format!("{dir}/{path}"))
            };
            let Some(resolved) = resolved.filter(|p| p.is_empty() || self.index.contains(p)) else {
                self.fail(
                    file,
                    line.number,
                    format!("link to a missing file: ({target})"),
                );
                continue;
            };
            if let Some(anchor) = anchor {
                if !resolved.ends_with(".md") {
                    continue;
                }
                if !self.anchors_of(&resolved).contains(anchor) {
                    self.fail(
                        file,
                        line.number,
                        format!(
                            "link to a missing heading: ({target}): {resolved} has no #{anchor}"
                        ),
                    );
                }
            }
        }
    }

    fn check_paths(&mut self, file: &str, line: &Line<'_>) {
        for span in code_spans(line.text) {
            let token = span.trim();
            if looks_like_a_path(token, &self.top_level) && !resolves(token, &self.index) {
                self.fail(
                    file,
                    line.number,
                    format!("`{token}` names no file or directory of the repository"),
                );
            }
        }
    }

    fn check_wording(&mut self, file: &str, line: &Line<'_>) {
        let lower = line.text.to_lowercase();
        if cites_an_issue(&lower) {
            self.fail(
                file,
                line.number,
                format!("cites an issue number: {}", line.text.trim()),
            );
        }
        for (pattern, why) in BANNED {
            let found = if pattern.chars().any(|c| c.is_ascii_uppercase()) {
                line.text.contains(pattern)
            } else {
                lower.contains(pattern)
            };
            if found {
                self.fail(file, line.number, format!("contains {pattern:?} ({why})"));
            }
        }
    }

    fn check_document(&mut self, file: &str) {
        let text = self.read(file);
        for line in lines(&text) {
            self.check_wording(file, &line);
            if line.opens_fence.is_some_and(str::is_empty) {
                self.fail(
                    file,
                    line.number,
                    "a code block without a language (rustdoc would compile it as Rust): \
                     write ```sh, ```text, ```json, ```toml or ```rust"
                        .to_string(),
                );
            }
            if line.in_code {
                continue;
            }
            self.check_links(file, &line);
            self.check_paths(file, &line);
        }
    }

    fn check_summary(&mut self) {
        let summary_file = "book/src/SUMMARY.md";
        let summary = self.read(summary_file);
        let mut listed = BTreeSet::new();
        for line in lines(&summary) {
            if line.in_code {
                continue;
            }
            for target in link_targets(line.text) {
                let page = format!("book/src/{}", target.split('#').next().unwrap_or_default());
                if target.is_empty() || !self.index.contains(&page) {
                    self.fail(
                        summary_file,
                        line.number,
                        format!("summary entry ({target}) is not a page of the book"),
                    );
                }
                listed.insert(page);
            }
        }
        let pages: Vec<String> = self
            .index
            .iter()
            .filter(|path| path.starts_with("book/src/") && path.ends_with(".md"))
            .filter(|path| path.as_str() != summary_file)
            .cloned()
            .collect();
        for page in pages {
            if !listed.contains(&page) {
                self.fail(&page, 1, format!("page not listed in {summary_file}"));
            }
        }
    }

    fn check_doctests(&mut self) {
        let lib = self.read("testing/src/lib.rs");
        if !lib.contains("include_str!(\"../../README.md\")") {
            self.fail(
                "testing/src/lib.rs",
                1,
                "the README is not compiled as a doc test".to_string(),
            );
        }
        let pages: Vec<String> = self
            .index
            .iter()
            .filter(|path| path.starts_with("book/src/") && path.ends_with(".md"))
            .cloned()
            .collect();
        for page in pages {
            let text = self.read(&page);
            let Some(line) = lines(&text).into_iter().find(|line| {
                line.opens_fence
                    .is_some_and(|info| info.starts_with("rust"))
            }) else {
                continue;
            };
            let relative = &page["book/src/".len()..];
            if !lib.contains(&format!("\"{relative}\"")) {
                self.fail(
                    &page,
                    line.number,
                    format!("has a rust block but is not in testing/src/lib.rs's book_doctests! list as \"{relative}\""),
                );
            }
        }
    }
}

#[test]
fn the_documentation_links_paths_and_wording_are_sound() {
    let mut checker = Checker::new();
    for file in documents(&checker.index) {
        checker.check_document(&file);
    }
    checker.check_summary();
    checker.check_doctests();
    assert!(
        checker.failures.is_empty(),
        "{} documentation problem(s):\n{}",
        checker.failures.len(),
        checker.failures.join("\n")
    );
}

#[test]
fn headings_are_slugged_as_mdbook_does() {
    assert_eq!(
        slug(&heading_text("Curator's framework and recipes")),
        "curators-framework-and-recipes"
    );
    assert_eq!(
        slug(&heading_text("`bench --quick` at 221914e")),
        "bench---quick-at-221914e"
    );
    assert_eq!(
        slug(&heading_text("[Read](a.md) a *report*")),
        "read-a-report"
    );
    let text = "# A\n\n```sh\n# not a heading\n```\n## A\n";
    let found = anchors(text);
    assert_eq!(found, BTreeSet::from(["a".to_string(), "a-1".to_string()]));
}

#[test]
fn path_tokens_are_told_from_other_code() {
    let top: BTreeSet<String> = ["coordination", "scripts"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for path in [
        "coordination/src/recipes/mutex.rs",
        "scripts/test",
        "recipes/",
        "framework.rs",
        "real/java",
    ] {
        assert!(looks_like_a_path(path, &top), "{path}");
    }
    for other in [
        "I/N",
        "0/3/1",
        "T/3",
        "coordination::driver",
        "--out",
        "0..200",
        "catalog/*.json",
        "a b.rs",
        "/usr/share/java/x.jar",
    ] {
        assert!(!looks_like_a_path(other, &top), "{other}");
    }
    assert!(cites_an_issue("see issue 13"));
    assert!(cites_an_issue("(issues 12 and 13)"));
    assert!(!cites_an_issue("an issue numbered nowhere; tissue 3"));
}
