//! The docs do not point at what is not there, and their tables of functions and flags
//! list what the code has. Docs drift: a file moves and a README still names its old
//! path, a section is renumbered and "§N" still cites it, a design note that never
//! entered the repository is still referred to, a flag or a function is added and no
//! table says so. This reads the top-level docs, `docs/*.md` and every README.md under
//! host/ and tests/ and fails naming the doc and the reference when (a) a repository path
//! written in backticks does not exist, (b) a "§N" is not a section of CONTRACT.md, or
//! (c) a doc mentions DESIGN; and it fails naming the doc, the table and the item when a
//! table of the CLI's commands and flags (from clap's definition), of the C ABI's
//! functions (from the header), of the WIT world's functions (from `wit/`) or of the Go,
//! npm and Python packages' exports (their `.go` files, declaration files, `__all__`)
//! misses one or lists one that is not there.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const TOP_DOCS: [&str; 5] = [
    "README.md",
    "CONTRACT.md",
    "TRACES.md",
    "BENCHMARKS.md",
    "CHANGELOG.md",
];
const TOP_DIRS: [&str; 6] = ["guest/", "host/", "tests/", "wit/", ".ci/", "docs/"];

fn root() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).to_path_buf()
}

/// The docs checked, as paths relative to the repository's root.
fn docs(root: &Path) -> Vec<PathBuf> {
    fn readmes(dir: &Path, root: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().unwrap().is_dir() {
                // Installed dependencies and build output are not the repository's.
                if !(name.starts_with('.') || name == "node_modules" || name == "target") {
                    readmes(&path, root, out);
                }
            } else if name == "README.md" {
                out.push(path.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    let mut out: Vec<PathBuf> = TOP_DOCS.iter().map(PathBuf::from).collect();
    out.extend(reference_docs(root));
    for dir in ["host", "tests"] {
        readmes(&root.join(dir), root, &mut out);
    }
    out
}

/// The reference docs, `docs/*.md`, as paths relative to the repository's root, sorted.
fn reference_docs(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| Path::new("docs").join(name))
        .collect();
    out.sort();
    out
}

/// The backticked texts (code spans within a line) of `text` that name a repository path.
fn paths(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let pieces: Vec<&str> = line.split('`').collect();
        // The odd pieces are in backticks, but for a last one that is never closed.
        for span in pieces
            .iter()
            .skip(1)
            .step_by(2)
            .take((pieces.len() - 1) / 2)
        {
            let path = span.trim_end_matches(['.', ',', ';', ':', ')']);
            let plain = !path.contains([' ', '*', '?', '<', '$', '…']) && !path.contains("://");
            let named = TOP_DOCS.contains(&path)
                || (path.contains('/') && TOP_DIRS.iter().any(|d| path.starts_with(d)));
            // npm's installed dependencies are no repository path.
            let installed = path.split('/').any(|part| part == "node_modules");
            if plain && named && !installed {
                out.push(path);
            }
        }
    }
    out
}

/// The numbers N of every "§N" in `text`.
fn sections(text: &str) -> Vec<String> {
    text.split('§')
        .skip(1)
        .map(|s| {
            s.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .filter(|n| !n.is_empty())
        .collect()
}

#[test]
fn docs_name_only_what_exists() {
    let root = root();
    let contract = std::fs::read_to_string(root.join("CONTRACT.md")).unwrap();
    // CONTRACT.md numbers its sections in their headings: "## §N Title".
    let numbered: Vec<String> = contract
        .lines()
        .filter(|line| line.starts_with("## §"))
        .flat_map(sections)
        .collect();
    assert!(
        numbered.len() > 5,
        "CONTRACT.md's sections not found: {numbered:?}"
    );
    let mut problems = Vec::new();
    for doc in docs(&root) {
        let text = std::fs::read_to_string(root.join(&doc)).unwrap();
        let shown = doc.display();
        // A package's README may name its own files relative to its folder.
        let folder = root.join(&doc).parent().unwrap().to_path_buf();
        for path in paths(&text) {
            if !root.join(path).exists() && !folder.join(path).exists() {
                problems.push(format!("{shown}: `{path}` does not exist"));
            }
        }
        for n in sections(&text) {
            if !numbered.contains(&n) {
                problems.push(format!("{shown}: §{n} is not a section of CONTRACT.md"));
            }
        }
        if text.contains("DESIGN") {
            problems.push(format!(
                "{shown}: mentions DESIGN, which is not in the repository"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "broken references in the docs:\n{}",
        problems.join("\n")
    );
}

/// A markdown table: its header's cells, the line of the header (from 1), and each row's
/// line and cells. Rows are the lines starting with `|` after the delimiter row.
struct Table {
    header: Vec<String>,
    line: usize,
    rows: Vec<(usize, Vec<String>)>,
}

impl Table {
    /// How a message names the table: its header as written, and where it starts.
    fn name(&self) -> String {
        format!(
            "the table `| {} |` (line {})",
            self.header.join(" | "),
            self.line
        )
    }

    /// The header's first cell, without backticks, e.g. "command" or "serve flag".
    fn kind(&self) -> String {
        self.header
            .first()
            .map(|cell| cell.replace('`', ""))
            .unwrap_or_default()
    }

    /// The column whose header is `name`, if any.
    fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|cell| cell == name)
    }
}

/// The cells of a table row: split on every `|` not escaped as `\|`, trimmed, without
/// the empty pieces before the first and after the last `|`.
fn cells(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cell = String::new();
    let mut chars = line.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cell.push('|');
                chars.next();
            }
            '|' => out.push(std::mem::take(&mut cell).trim().to_string()),
            _ => cell.push(c),
        }
    }
    out.push(cell.trim().to_string());
    // A row starts and ends with `|`: drop the pieces outside them.
    if out.first().is_some_and(String::is_empty) {
        out.remove(0);
    }
    if out.last().is_some_and(String::is_empty) {
        out.pop();
    }
    out
}

/// Every markdown table of `text`: a line starting with `|`, a delimiter row (`|---|`),
/// then the rows. Lines inside fenced code blocks are no table.
fn tables(text: &str) -> Vec<Table> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut fenced = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        if line.starts_with("```") {
            fenced = !fenced;
        }
        let delimiter = |l: &str| {
            let l = l.trim();
            l.starts_with('|') && l.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
        };
        if !fenced && line.starts_with('|') && lines.get(i + 1).is_some_and(|next| delimiter(next))
        {
            let mut table = Table {
                header: cells(line),
                line: i + 1,
                rows: Vec::new(),
            };
            i += 2;
            while i < lines.len() && lines[i].trim_start().starts_with('|') {
                table.rows.push((i + 1, cells(lines[i])));
                i += 1;
            }
            out.push(table);
        } else {
            i += 1;
        }
    }
    out
}

/// The texts in backticks of a cell.
fn spans(cell: &str) -> Vec<&str> {
    let pieces: Vec<&str> = cell.split('`').collect();
    pieces
        .iter()
        .skip(1)
        .step_by(2)
        .take((pieces.len() - 1) / 2)
        .copied()
        .collect()
}

/// The first word of a cell's first code span: the item a row is about (`put` of
/// "`put NS/NAME [FILE\|-]...`", `--listen` of "`--listen ADDRESS`").
fn first_item(cell: &str) -> Option<String> {
    spans(cell)
        .first()
        .and_then(|span| span.split_whitespace().next())
        .map(str::to_string)
}

/// The long flags a cell names: the first word of each code span that starts with `--`.
fn flags_in(cell: &str) -> Vec<String> {
    spans(cell)
        .into_iter()
        .filter_map(|span| span.split_whitespace().next())
        .filter(|word| word.starts_with("--"))
        .map(|word| word.split('=').next().unwrap().to_string())
        .collect()
}

/// Compares what a table lists with what the code has, in both directions, adding a
/// problem naming the doc, the table and each item missing or extra (and each listed
/// twice, when `once`).
fn compare(
    problems: &mut Vec<String>,
    doc: &str,
    table: &str,
    what: &str,
    listed: &[String],
    code: &BTreeSet<String>,
    once: bool,
) {
    let mut seen = BTreeSet::new();
    for item in listed {
        if !seen.insert(item.clone()) && once {
            problems.push(format!("{doc}: {table} lists {what} `{item}` twice"));
        }
    }
    for item in code.difference(&seen) {
        problems.push(format!(
            "{doc}: {table} lacks {what} `{item}`, which the code has"
        ));
    }
    for item in seen.difference(code) {
        problems.push(format!(
            "{doc}: {table} lists {what} `{item}`, which the code does not have"
        ));
    }
}

/// The long flags of a clap command that a user types, each with the environment
/// variable it reads: not hidden, not clap's own help and version, and, with
/// `own_only`, not the global ones (which the root lists).
fn long_flags(command: &clap::Command, own_only: bool) -> BTreeMap<String, Option<String>> {
    command
        .get_arguments()
        .filter(|arg| !arg.is_hide_set())
        .filter(|arg| !(own_only && arg.is_global_set()))
        .filter(|arg| !["help", "version"].contains(&arg.get_id().as_str()))
        .filter_map(|arg| {
            let env = arg.get_env().map(|e| e.to_string_lossy().into_owned());
            arg.get_long().map(|long| (format!("--{long}"), env))
        })
        .collect()
}

/// The CLI's subcommands, by name, with their own long flags (globals excluded).
fn subcommands(root: &clap::Command) -> BTreeMap<String, BTreeSet<String>> {
    root.get_subcommands()
        .filter(|sub| !sub.is_hide_set() && sub.get_name() != "help")
        .map(|sub| {
            let own = long_flags(sub, true).into_keys().collect();
            (sub.get_name().to_string(), own)
        })
        .collect()
}

/// Every table of the CLI in the docs lists the commands and long flags clap defines:
/// `docs/cli.md`'s table of global options (the flag in the first column, the
/// environment variable in the `env` column), its table of commands (the command's name
/// first in the first column, each of its flags in backticks in the `flags` column; a
/// command may take several rows, e.g. `diff` and `diff --local`), and any table headed
/// "`COMMAND` flag" in any doc, which lists exactly that command's flags.
#[test]
fn cli_tables_match_clap() {
    let root = root();
    let command = render_store_cli::cli::command();
    let globals = long_flags(&command, false);
    let commands = subcommands(&command);
    assert!(
        globals.len() > 5 && commands.len() > 10 && commands["serve"].len() > 10,
        "clap's command tree not read: {globals:?} {commands:?}"
    );
    let mut problems = Vec::new();
    let mut found_globals = false;
    let mut found_commands = false;
    for doc in docs(&root) {
        let text = std::fs::read_to_string(root.join(&doc)).unwrap();
        let shown = doc.display().to_string();
        for table in tables(&text) {
            let name = table.name();
            let kind = table.kind();
            if kind == "global option" {
                found_globals |= shown == "docs/cli.md";
                let listed: Vec<String> = table
                    .rows
                    .iter()
                    .filter_map(|(_, row)| row.first().and_then(|c| first_item(c)))
                    .collect();
                let code: BTreeSet<String> = globals.keys().cloned().collect();
                compare(
                    &mut problems,
                    &shown,
                    &name,
                    "the global flag",
                    &listed,
                    &code,
                    true,
                );
                if let Some(env) = table.column("env") {
                    for (line, row) in &table.rows {
                        let Some(flag) = row.first().and_then(|c| first_item(c)) else {
                            continue;
                        };
                        let Some(Some(want)) = globals.get(&flag) else {
                            continue;
                        };
                        let has = row.get(env).map(|c| spans(c).contains(&want.as_str()));
                        if has != Some(true) {
                            problems.push(format!(
                                "{shown}: {name}, line {line}: `{flag}` reads the environment variable `{want}`, which its env column does not name"
                            ));
                        }
                    }
                }
            } else if kind == "command" && table.column("flags").is_some() {
                found_commands |= shown == "docs/cli.md";
                let flags_column = table.column("flags").unwrap();
                let mut listed: BTreeMap<String, Vec<String>> = BTreeMap::new();
                for (line, row) in &table.rows {
                    let Some(cmd) = row.first().and_then(|c| first_item(c)) else {
                        problems.push(format!(
                            "{shown}: {name}, line {line}: no command in backticks in the first column"
                        ));
                        continue;
                    };
                    let flags = row
                        .get(flags_column)
                        .map(|c| flags_in(c))
                        .unwrap_or_default();
                    listed.entry(cmd).or_default().extend(flags);
                }
                let names: Vec<String> = listed.keys().cloned().collect();
                let code: BTreeSet<String> = commands.keys().cloned().collect();
                compare(
                    &mut problems,
                    &shown,
                    &name,
                    "the command",
                    &names,
                    &code,
                    false,
                );
                for (cmd, flags) in &listed {
                    if let Some(code) = commands.get(cmd) {
                        let what = format!("for `{cmd}` the flag");
                        compare(&mut problems, &shown, &name, &what, flags, code, true);
                    }
                }
            } else if let Some(cmd) = kind.strip_suffix(" flag") {
                let Some(code) = commands.get(cmd) else {
                    problems.push(format!(
                        "{shown}: {name} is headed by a command the CLI does not have: `{cmd}`"
                    ));
                    continue;
                };
                let listed: Vec<String> = table
                    .rows
                    .iter()
                    .filter_map(|(_, row)| row.first().and_then(|c| first_item(c)))
                    .collect();
                let what = format!("for `{cmd}` the flag");
                compare(&mut problems, &shown, &name, &what, &listed, code, true);
            }
        }
    }
    if !found_globals {
        problems.push(
            "docs/cli.md: no table headed `| global option | …` (the flags every command takes)"
                .into(),
        );
    }
    if !found_commands {
        problems.push(
            "docs/cli.md: no table headed `| command | flags | …` (every command and its flags)"
                .into(),
        );
    }
    assert!(
        problems.is_empty(),
        "the docs' CLI tables and the CLI's clap definition differ (update the doc's table):\n{}",
        problems.join("\n")
    );
}

/// The functions `host/capi/include/render_store.h` declares: each `rs_…(` of a line
/// that is not a comment.
fn c_functions(root: &Path) -> BTreeSet<String> {
    let header = std::fs::read_to_string(root.join("host/capi/include/render_store.h")).unwrap();
    let mut out = BTreeSet::new();
    for line in header.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//")
            || trimmed.starts_with('*')
            || trimmed.starts_with("/*")
            || line.starts_with(' ')
        {
            continue;
        }
        if let Some(open) = line.find('(') {
            let name: String = line[..open]
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            if name.starts_with("rs_") {
                out.insert(name);
            }
        }
    }
    out
}

/// The C ABI's tables list every function of the header and nothing else:
/// `docs/c-abi.md`'s table of functions (one a row, first column) and
/// `host/capi/README.md`'s table of groups (every `rs_…` in backticks of its rows); and
/// every doc that states the ABI's version ("RS_ABI_VERSION N", "C ABI version N")
/// states the header's.
#[test]
fn c_abi_tables_match_the_header() {
    let root = root();
    // The entry points generated from the WIT (`rs_call_*`) have their own table, which
    // render-store-bindgen writes and its test keeps fresh.
    let code: BTreeSet<String> = c_functions(&root)
        .into_iter()
        .filter(|f| !f.starts_with("rs_call_"))
        .collect();
    assert!(
        code.len() > 50,
        "the header's functions not found: {code:?}"
    );
    let mut problems = Vec::new();
    for (doc, kind) in [
        ("docs/c-abi.md", "function"),
        ("host/capi/README.md", "group"),
    ] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        let mut found = false;
        for table in tables(&text).into_iter().filter(|t| t.kind() == kind) {
            found = true;
            let listed: Vec<String> = if kind == "function" {
                table
                    .rows
                    .iter()
                    .filter_map(|(_, row)| row.first().and_then(|c| first_item(c)))
                    .map(|item| item.trim_end_matches("()").to_string())
                    .collect()
            } else {
                table
                    .rows
                    .iter()
                    .flat_map(|(_, row)| row.iter().flat_map(|c| spans(c)))
                    .filter(|span| span.starts_with("rs_") && !span.contains(' '))
                    .map(|span| span.trim_end_matches("()").to_string())
                    .collect()
            };
            compare(
                &mut problems,
                doc,
                &table.name(),
                "the C function",
                &listed,
                &code,
                true,
            );
        }
        if !found {
            problems.push(format!(
                "{doc}: no table headed `| {kind} | …` of the C ABI's functions"
            ));
        }
    }
    // Every version a doc states is the header's.
    let header = std::fs::read_to_string(root.join("host/capi/include/render_store.h")).unwrap();
    let version = header
        .lines()
        .find_map(|line| line.strip_prefix("#define RS_ABI_VERSION "))
        .expect("the header defines RS_ABI_VERSION")
        .trim()
        .to_string();
    for doc in docs(&root) {
        let text = std::fs::read_to_string(root.join(&doc)).unwrap();
        for marker in ["RS_ABI_VERSION ", "C ABI version "] {
            for stated in text.split(marker).skip(1) {
                let number: String = stated.chars().take_while(char::is_ascii_digit).collect();
                if !number.is_empty() && number != version {
                    problems.push(format!(
                        "{}: says `{marker}{number}`, the header's RS_ABI_VERSION is {version}",
                        doc.display()
                    ));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "the docs' C ABI tables and host/capi/include/render_store.h differ:\n{}",
        problems.join("\n")
    );
}

/// `docs/wit.md`'s table of functions lists every function of every interface the
/// world imports or exports, as `interface.function`, and names the package as `wit/`
/// declares it.
#[test]
fn wit_table_matches_the_world() {
    let root = root();
    let mut resolve = wit_parser::Resolve::new();
    let (package, _) = resolve.push_dir(root.join("wit")).unwrap();
    let world = resolve.select_world(&[package], None).unwrap();
    let world = &resolve.worlds[world];
    let mut code = BTreeSet::new();
    for item in world.imports.values().chain(world.exports.values()) {
        if let wit_parser::WorldItem::Interface { id, .. } = item {
            let interface = &resolve.interfaces[*id];
            let name = interface.name.clone().unwrap_or_default();
            for function in interface.functions.keys() {
                code.insert(format!("{name}.{function}"));
            }
        }
    }
    assert!(code.len() > 40, "the world's functions not found: {code:?}");
    let doc = "docs/wit.md";
    let text = std::fs::read_to_string(root.join(doc)).unwrap();
    let mut problems = Vec::new();
    let package_name = resolve.packages[package].name.to_string();
    if !text.contains(&format!("`{package_name}`")) {
        problems.push(format!("{doc}: does not name the package `{package_name}`"));
    }
    let mut found = false;
    for table in tables(&text).into_iter().filter(|t| t.kind() == "function") {
        found = true;
        let listed: Vec<String> = table
            .rows
            .iter()
            .filter_map(|(_, row)| row.first().and_then(|c| first_item(c)))
            .collect();
        compare(
            &mut problems,
            doc,
            &table.name(),
            "the WIT function",
            &listed,
            &code,
            true,
        );
    }
    if !found {
        problems.push(format!(
            "{doc}: no table headed `| function | …` of the world's functions"
        ));
    }
    assert!(
        problems.is_empty(),
        "docs/wit.md and the world in wit/ differ:\n{}",
        problems.join("\n")
    );
}

/// The table parser reads what the checks rely on: escaped bars inside code, rows after
/// the delimiter, no table inside a code block.
#[test]
fn tables_are_read_as_written() {
    let text = "text\n| command | flags |\n|---|---|\n| `put NS/NAME [FILE\\|-]...` | `--format F`, `--dry-run` |\n\n```\n| a | b |\n|---|---|\n```\n";
    let read = tables(text);
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].header, ["command", "flags"]);
    assert_eq!(read[0].line, 2);
    let (line, row) = &read[0].rows[0];
    assert_eq!(*line, 4);
    assert_eq!(row[0], "`put NS/NAME [FILE|-]...`");
    assert_eq!(first_item(&row[0]).as_deref(), Some("put"));
    assert_eq!(flags_in(&row[1]), ["--format", "--dry-run"]);
    let mut problems = Vec::new();
    let code: BTreeSet<String> = ["--format".to_string(), "--limit".to_string()].into();
    compare(
        &mut problems,
        "d.md",
        "t",
        "the flag",
        &flags_in(&row[1]),
        &code,
        true,
    );
    assert_eq!(
        problems,
        [
            "d.md: t lacks the flag `--limit`, which the code has",
            "d.md: t lists the flag `--dry-run`, which the code does not have"
        ]
    );
}

/// The values the npm package declares: each `export function|class|const NAME` of
/// its declaration files (types and interfaces are not values).
fn js_exports(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for file in ["host/js/core.d.mts", "host/js/render-store.d.mts"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("export ") else {
                continue;
            };
            let rest = rest.strip_prefix("declare ").unwrap_or(rest);
            for kind in ["function ", "class ", "const "] {
                if let Some(declared) = rest.strip_prefix(kind) {
                    let name: String = declared
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    out.insert(name);
                }
            }
        }
    }
    out
}

/// The names the Python package exports: the quoted names of its `__all__`.
fn python_exports(root: &Path) -> BTreeSet<String> {
    let text =
        std::fs::read_to_string(root.join("host/python/src/render_store/__init__.py")).unwrap();
    let list = text
        .split("__all__ = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .expect("host/python's __init__.py has an __all__");
    list.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The tables of the packages' exports list each one and nothing else: the npm
/// package's in `docs/javascript.md` (headed `| export | …`) against its declaration
/// files, the Python package's in `docs/c-abi.md` (headed `| name | …`) against its
/// `__all__`.
#[test]
fn package_export_tables_match_the_packages() {
    let root = root();
    let mut problems = Vec::new();
    for (doc, kind, code, what) in [
        (
            "docs/javascript.md",
            "export",
            js_exports(&root),
            "the npm export",
        ),
        (
            "docs/c-abi.md",
            "name",
            python_exports(&root),
            "the Python name",
        ),
    ] {
        assert!(code.len() > 30, "{what}s not found: {code:?}");
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        let mut found = false;
        for table in tables(&text).into_iter().filter(|t| t.kind() == kind) {
            found = true;
            let listed: Vec<String> = table
                .rows
                .iter()
                .filter_map(|(_, row)| row.first().and_then(|c| first_item(c)))
                .collect();
            compare(
                &mut problems,
                doc,
                &table.name(),
                what,
                &listed,
                &code,
                true,
            );
        }
        if !found {
            problems.push(format!("{doc}: no table headed `| {kind} | …` of {what}s"));
        }
    }
    assert!(
        problems.is_empty(),
        "the docs' tables of the packages' exports and the packages differ:\n{}",
        problems.join("\n")
    );
}

/// The functions and methods the Go package exports, from its `.go` files (tests
/// aside): each `func Name` and each `func (r *Type) Name` of an exported type, the
/// latter as `Type.Name`.
fn go_exports(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for entry in std::fs::read_dir(root.join("host/go")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // wit_calls.go is written from the WIT by render-store-bindgen: its functions
        // are the exports' (docs/c-abi.md's generated table), checked by its coverage test.
        if !name.ends_with(".go") || name.ends_with("_test.go") || name == "wit_calls.go" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("func ") else {
                continue;
            };
            let (receiver, rest) = match rest.strip_prefix('(') {
                Some(inner) => {
                    let (receiver, rest) = inner.split_once(')').unwrap();
                    let ty = receiver.split_whitespace().last().unwrap_or_default();
                    let ty = ty.trim_start_matches('*').split('[').next().unwrap();
                    (Some(ty.to_string()), rest.trim_start())
                }
                None => (None, rest),
            };
            let func: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let exported = |s: &str| s.starts_with(|c: char| c.is_ascii_uppercase());
            match receiver {
                None if exported(&func) => {
                    out.insert(func);
                }
                Some(ty) if exported(&ty) && exported(&func) => {
                    out.insert(format!("{ty}.{func}"));
                }
                _ => {}
            }
        }
    }
    out
}

/// `docs/c-abi.md`'s table of the Go package (headed `| Go | …`) lists every function
/// and method it exports and nothing else.
#[test]
fn go_table_matches_the_package() {
    let root = root();
    let code = go_exports(&root);
    assert!(
        code.contains("Open") && code.contains("Store.PutRender") && code.len() > 40,
        "the Go package's functions not found: {code:?}"
    );
    let doc = "docs/c-abi.md";
    let text = std::fs::read_to_string(root.join(doc)).unwrap();
    let mut problems = Vec::new();
    let mut found = false;
    for table in tables(&text).into_iter().filter(|t| t.kind() == "Go") {
        found = true;
        let listed: Vec<String> = table
            .rows
            .iter()
            .filter_map(|(_, row)| row.first().and_then(|c| first_item(c)))
            .collect();
        let what = "the Go function or method";
        compare(
            &mut problems,
            doc,
            &table.name(),
            what,
            &listed,
            &code,
            true,
        );
    }
    if !found {
        problems.push(format!(
            "{doc}: no table headed `| Go | …` of the Go package"
        ));
    }
    assert!(
        problems.is_empty(),
        "docs/c-abi.md and the Go package in host/go differ:\n{}",
        problems.join("\n")
    );
}
