//! A changed object's diff as the diff page shows it, from the component's whole-object
//! unified diff (its hunks abut, each headed by where its change is): line numbers of
//! both sides, the changed part of each changed line marked, the unchanged lines far
//! from any change folded into a `<details>` a reader can open (no script needed), in
//! one column or side by side.

use maud::{Markup, html};

/// Unchanged lines kept open on each side of a change; more are folded.
const OPEN_CONTEXT: usize = 3;

/// How the lines are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
    /// One column, removed lines before added ones.
    Unified,
    /// Old on the left, new on the right.
    Split,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Same,
    Removed,
    Added,
}

/// One line of a hunk with its numbers on each side and, for a changed line, the byte
/// range of the part that differs from its partner on the other side.
struct Line<'a> {
    kind: Kind,
    text: &'a str,
    old: Option<u64>,
    new: Option<u64>,
    changed: Option<(usize, usize)>,
}

/// A hunk: its header's ranges and path, and its lines.
struct Hunk<'a> {
    ranges: &'a str,
    path: &'a str,
    lines: Vec<Line<'a>>,
}

/// `@@ -a,b +c,d @@ PATH`: the ranges part, the two starts, and the path.
fn header(line: &str) -> Option<(&str, u64, u64, &str)> {
    let rest = line.strip_prefix("@@ -")?;
    let close = rest.find(" @@")?;
    let ranges = &line[..4 + close + 3];
    let (old, new) = rest[..close].split_once(" +")?;
    let start = |r: &str| r.split(',').next()?.parse::<u64>().ok();
    let path = rest[close + 3..].trim_start();
    Some((ranges, start(old)?, start(new)?, path))
}

fn parse(lines: &[String]) -> Vec<Hunk<'_>> {
    let mut hunks: Vec<Hunk<'_>> = Vec::new();
    let (mut old, mut new) = (0u64, 0u64);
    for line in lines {
        if let Some((ranges, a, c, path)) = header(line) {
            // A range of no lines names the line before it.
            (old, new) = (a.max(1), c.max(1));
            hunks.push(Hunk {
                ranges,
                path,
                lines: Vec::new(),
            });
            continue;
        }
        let Some(hunk) = hunks.last_mut() else {
            continue;
        };
        let (kind, text) = match line.split_at_checked(1) {
            Some(("-", text)) => (Kind::Removed, text),
            Some(("+", text)) => (Kind::Added, text),
            Some((_, text)) => (Kind::Same, text),
            None => (Kind::Same, ""),
        };
        let (o, n) = match kind {
            Kind::Same => (Some(old), Some(new)),
            Kind::Removed => (Some(old), None),
            Kind::Added => (None, Some(new)),
        };
        old += u64::from(o.is_some());
        new += u64::from(n.is_some());
        hunk.lines.push(Line {
            kind,
            text,
            old: o,
            new: n,
            changed: None,
        });
    }
    for hunk in &mut hunks {
        mark_changes(&mut hunk.lines);
    }
    hunks
}

/// Pairs each run's removed lines with its added ones, in order, and marks in both the
/// part between their common start and common end.
fn mark_changes(lines: &mut [Line<'_>]) {
    let mut i = 0;
    while i < lines.len() {
        if lines[i].kind != Kind::Removed {
            i += 1;
            continue;
        }
        let removed = i;
        while i < lines.len() && lines[i].kind == Kind::Removed {
            i += 1;
        }
        let added = i;
        while i < lines.len() && lines[i].kind == Kind::Added {
            i += 1;
        }
        let pairs = (added - removed).min(i - added);
        for k in 0..pairs {
            let (a, b) = (lines[removed + k].text, lines[added + k].text);
            let (x, y) = differing(a, b);
            lines[removed + k].changed = Some(x);
            lines[added + k].changed = Some(y);
        }
    }
}

/// The byte ranges of `a` and `b` between their common prefix and common suffix (on
/// character boundaries).
fn differing(a: &str, b: &str) -> ((usize, usize), (usize, usize)) {
    let prefix: usize = a
        .chars()
        .zip(b.chars())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x.len_utf8())
        .sum();
    let suffix: usize = a[prefix..]
        .chars()
        .rev()
        .zip(b[prefix..].chars().rev())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x.len_utf8())
        .sum();
    ((prefix, a.len() - suffix), (prefix, b.len() - suffix))
}

/// A line's text, its changed part in `<mark>`.
fn text_html(line: &Line<'_>) -> Markup {
    html! {
        @match line.changed {
            Some((from, to)) if from < to => {
                (line.text[..from]) mark { (line.text[from..to]) } (line.text[to..])
            }
            _ => (line.text),
        }
    }
}

fn number(n: Option<u64>) -> String {
    n.map(|n| n.to_string()).unwrap_or_default()
}

fn class(kind: Kind) -> &'static str {
    match kind {
        Kind::Same => "ctx",
        Kind::Removed => "del",
        Kind::Added => "add",
    }
}

fn sign(kind: Kind) -> char {
    match kind {
        Kind::Same => ' ',
        Kind::Removed => '-',
        Kind::Added => '+',
    }
}

/// Which lines of a hunk stay open: every changed line and the `OPEN_CONTEXT` unchanged
/// ones next to a change; each other run of unchanged lines is a fold.
fn open_lines(lines: &[Line<'_>]) -> Vec<bool> {
    let mut open = vec![false; lines.len()];
    for (i, line) in lines.iter().enumerate() {
        if line.kind != Kind::Same {
            let from = i.saturating_sub(OPEN_CONTEXT);
            let to = (i + OPEN_CONTEXT + 1).min(lines.len());
            open[from..to].iter_mut().for_each(|o| *o = true);
        }
    }
    open
}

/// Runs of lines: open ones, and folded ones.
fn runs(open: &[bool]) -> Vec<(bool, std::ops::Range<usize>)> {
    let mut runs: Vec<(bool, std::ops::Range<usize>)> = Vec::new();
    for (i, &o) in open.iter().enumerate() {
        match runs.last_mut() {
            Some((was, range)) if *was == o => range.end = i + 1,
            _ => runs.push((o, i..i + 1)),
        }
    }
    runs
}

fn fold_summary(n: usize) -> Markup {
    html! {
        summary { "⋯ " (n) " unchanged line" @if n != 1 { "s" } }
    }
}

fn unified_lines(lines: &[Line<'_>]) -> Markup {
    // The numbers are drawn from attributes, so a line's text is its own: selecting or
    // copying it takes no numbers along.
    html! {
        @for line in lines {
            span class=(class(line.kind)) {
                i class="ln" data-n=(number(line.old)) {}
                i class="ln" data-n=(number(line.new)) {}
                (sign(line.kind)) (text_html(line))
            }
        }
    }
}

/// A side-by-side cell pair: the line's number and its text, or two empty cells.
fn split_cell(line: Option<&Line<'_>>) -> Markup {
    html! {
        @match line {
            Some(l) => {
                td class="ln" data-n=(number(if l.kind == Kind::Added { l.new } else { l.old })) {}
                td class=(class(l.kind)) { (text_html(l)) }
            }
            None => { td class="ln" {} td class="none" {} }
        }
    }
}

/// Rows of the side-by-side table: unchanged lines on both sides, and each run of
/// changes with its removed lines on the left beside its added ones on the right.
fn split_rows(lines: &[Line<'_>]) -> Markup {
    // Paired first, so the template is one loop over rows.
    let mut rows: Vec<(Option<&Line<'_>>, Option<&Line<'_>>)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].kind == Kind::Same {
            rows.push((Some(&lines[i]), Some(&lines[i])));
            i += 1;
            continue;
        }
        let start = i;
        while i < lines.len() && lines[i].kind == Kind::Removed {
            i += 1;
        }
        let added = i;
        while i < lines.len() && lines[i].kind == Kind::Added {
            i += 1;
        }
        for k in 0..(added - start).max(i - added) {
            rows.push((
                lines.get(start + k).filter(|_| start + k < added),
                lines.get(added + k).filter(|_| added + k < i),
            ));
        }
    }
    html! {
        @for (left, right) in rows {
            tr {
                (split_cell(left))
                @match right {
                    // An unchanged line's right side: its new number, its text unmarked.
                    Some(r) if r.kind == Kind::Same => {
                        td class="ln" data-n=(number(r.new)) {}
                        td class="ctx" { (r.text) }
                    }
                    _ => (split_cell(right)),
                }
            }
        }
    }
}

/// One changed object's diff lines in `layout`.
pub(super) fn diff_lines_html(lines: &[String], layout: Layout) -> Markup {
    html! {
        @for hunk in parse(lines) {
            div class="hunk-head" {
                code class="hunk-path" {
                    (if hunk.path.is_empty() { "(top level)" } else { hunk.path })
                }
                " "
                span class="hunk-range" { (hunk.ranges) }
            }
            @let runs = runs(&open_lines(&hunk.lines));
            @match layout {
                Layout::Unified => {
                    div class="hunk" {
                        @for (is_open, range) in runs {
                            @if is_open {
                                (unified_lines(&hunk.lines[range]))
                            } @else {
                                details class="fold" {
                                    (fold_summary(range.len()))
                                    (unified_lines(&hunk.lines[range]))
                                }
                            }
                        }
                    }
                }
                Layout::Split => {
                    div class="hunk split" {
                        @for (is_open, range) in runs {
                            @let table = html! {
                                table class="split-lines" {
                                    colgroup {
                                        col class="ln-col"; col; col class="ln-col"; col;
                                    }
                                    tbody { (split_rows(&hunk.lines[range.clone()])) }
                                }
                            };
                            @if is_open {
                                (table)
                            } @else {
                                details class="fold" { (fold_summary(range.len())) (table) }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[&str]) -> Vec<String> {
        text.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn the_changed_part_of_a_line_is_marked() {
        assert_eq!(
            differing("  image: calico/node:v3.1", "  image: calico/node:v3.2"),
            ((24, 25), (24, 25))
        );
        let html = diff_lines_html(
            &lines(&[
                "@@ -1,2 +1,2 @@ spec.image",
                " a: 1",
                "-image: app:v1",
                "+image: app:v22",
            ]),
            Layout::Unified,
        )
        .into_string();
        assert!(html.contains("-image: app:v<mark>1</mark>"), "{html}");
        assert!(html.contains("+image: app:v<mark>22</mark>"), "{html}");
        assert!(
            html.contains("<code class=\"hunk-path\">spec.image</code>"),
            "{html}"
        );
        // Old and new numbers.
        assert!(
            html.contains("data-n=\"2\"></i><i class=\"ln\" data-n=\"\"></i>-image"),
            "{html}"
        );
        assert!(
            html.contains("data-n=\"\"></i><i class=\"ln\" data-n=\"2\"></i>+image"),
            "{html}"
        );
    }

    #[test]
    fn unchanged_lines_far_from_changes_fold() {
        let mut text = vec!["@@ -1,12 +1,12 @@ spec.x".to_string()];
        text.extend((1..=10).map(|i| format!(" line {i}")));
        text.push("-old".into());
        text.push("+new".into());
        text.push(" last".into());
        let html = diff_lines_html(&text, Layout::Unified).into_string();
        // Ten unchanged lines before the change: seven folded, three open.
        assert!(html.contains("⋯ 7 unchanged lines"), "{html}");
        assert_eq!(html.matches("<details class=\"fold\">").count(), 1);
        let split = diff_lines_html(&text, Layout::Split).into_string();
        assert!(split.contains("⋯ 7 unchanged lines"), "{split}");
        // A pair with nothing in common is marked whole, side by side.
        assert!(split.contains("<td class=\"del\"><mark>old</mark></td><td class=\"ln\" data-n=\"11\"></td><td class=\"add\"><mark>new</mark></td>"), "{split}");
    }

    #[test]
    fn markup_in_lines_is_escaped() {
        let html = diff_lines_html(
            &lines(&["@@ -1,1 +1,1 @@ <b>", "-<i>x</i>", "+<i>y</i>"]),
            Layout::Split,
        )
        .into_string();
        assert!(!html.contains("<i>x") && !html.contains("<b>"), "{html}");
    }
}
