//! `completion` and `man`: the shell completion scripts and the manual page, made from
//! the argument definitions; and the hidden `__complete`, which the scripts call to
//! complete what only the store knows: release names and `@N` entries.
//!
//! Which word is a release and which a render is decided here, from the argument
//! definitions, so that each shell's script stays a few lines that pass the words
//! along: a command's first positional `release` completes release names (or NAMEs of
//! `-n`'s namespace); its later positionals and `--protect`, `--against` and `--running`
//! complete `@N`.

use super::Context;
use crate::args::command;
use crate::names;
use anyhow::Result;
use clap_complete::Shell;
use std::io::Write;
use std::time::Duration;

/// How long `__complete` may take: a shell waits for it while a person types.
const COMPLETE_TIMEOUT: Duration = Duration::from_secs(3);

/// The options whose value names a render of the release.
const RENDER_OPTIONS: [&str; 3] = ["--protect", "--against", "--running"];

/// The hidden subcommand the scripts call.
pub const COMPLETE_COMMAND: &str = "__complete";

/// Writes the completion script of `shell`: clap's, and for bash, zsh and fish a
/// function that asks `render-store __complete` first.
pub fn script(shell: Shell) -> Result<()> {
    let mut out = std::io::stdout().lock();
    clap_complete::generate(shell, &mut command(), "render-store", &mut out);
    if let Some(dynamic) = dynamic_script(shell) {
        out.write_all(dynamic.as_bytes())?;
    }
    Ok(())
}

/// The script that puts the store's names before clap's own completion, if the shell
/// has one here.
fn dynamic_script(shell: Shell) -> Option<&'static str> {
    match shell {
        // clap names its bash function `_render__store`, its zsh one `_render-store`.
        // The words are split on blanks alone: bash's own split also breaks at `@`
        // and `=`, which would cut `@1` in two. Only the part after the last `@` is
        // replaced, as bash's word breaks then expect.
        Shell::Bash => Some(
            r#"
# Release names and @N entries, from the store (render-store __complete).
_render_store_dynamic() {
    local line="${COMP_LINE:0:COMP_POINT}" cur=""
    local -a words
    read -r -a words <<< "$line"
    [[ "$line" =~ [[:space:]]$ ]] || { cur="${words[-1]}"; unset 'words[-1]'; }
    local found
    found=$(render-store __complete -- "${words[@]:1}" "$cur" 2>/dev/null)
    if [[ -n "$found" ]]; then
        local -a candidates
        mapfile -t candidates <<< "$found"
        local cut=""
        [[ "$cur" == *@* && "$COMP_WORDBREAKS" == *@* ]] && cut="${cur%@*}@"
        COMPREPLY=("${candidates[@]#"$cut"}")
        return 0
    fi
    _render__store "$@"
    # clap offers its hidden subcommands too: the scripts' own is no word for people.
    local -a kept=()
    local word
    for word in "${COMPREPLY[@]}"; do
        [[ "$word" == __complete ]] || kept+=("$word")
    done
    COMPREPLY=("${kept[@]}")
}
complete -F _render_store_dynamic -o bashdefault -o default render-store
"#,
        ),
        Shell::Zsh => Some(
            r#"
# Release names and @N entries, from the store (render-store __complete).
_render_store_dynamic() {
    local -a found
    found=(${(f)"$(render-store __complete -- ${words[2,CURRENT-1]} "${words[CURRENT]}" 2>/dev/null)"})
    if (( ${#found} )); then
        compadd -Q -- $found
    else
        _render-store "$@"
    fi
}
compdef _render_store_dynamic render-store
"#,
        ),
        Shell::Fish => Some(
            r#"
# Release names and @N entries, from the store (render-store __complete).
complete -c render-store -f -a '(render-store __complete -- (commandline -opc)[2..] (commandline -ct) 2>/dev/null)'
"#,
        ),
        _ => None,
    }
}

/// Writes the manual page (roff).
pub fn man() -> Result<()> {
    clap_mangen::Man::new(command()).render(&mut std::io::stdout())?;
    Ok(())
}

/// What the word being typed is, given the words before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slot {
    /// A release: `NAMESPACE/NAME`, or `NAME` of this namespace (`-n`).
    Release(Option<String>),
    /// A render of this release, as `@N`.
    Entry(String, Option<String>),
    /// Nothing the store knows.
    Other,
}

/// Reads `before` (the words after `render-store`, before the one being typed) as
/// clap would: options that take a value skip it, `-n`'s value is kept, the first free
/// word is the command and the next ones its positionals.
pub fn slot(before: &[String]) -> Slot {
    let tree = command();
    let takes_value = |cmd: &clap::Command, word: &str| {
        cmd.get_arguments().any(|a| {
            let named = word
                .strip_prefix("--")
                .is_some_and(|l| a.get_long() == Some(l))
                || word
                    .strip_prefix('-')
                    .and_then(|s| s.chars().next())
                    .is_some_and(|c| word.len() == 2 && a.get_short() == Some(c));
            named && a.get_action().takes_values()
        })
    };
    let mut namespace = None;
    let mut sub: Option<&clap::Command> = None;
    let mut positionals: Vec<&str> = Vec::new();
    let mut words = before.iter().peekable();
    let mut pending: Option<&str> = None;
    while let Some(word) = words.next() {
        let word = word.as_str();
        if word.starts_with('-') && word.len() > 1 {
            // `--flag=value` carries its value.
            let (flag, inline) = match word.split_once('=') {
                Some((f, v)) => (f, Some(v)),
                None => (word, None),
            };
            let scope = sub.unwrap_or(&tree);
            if takes_value(scope, flag) || takes_value(&tree, flag) {
                let value = match inline {
                    Some(v) => Some(v),
                    None => words.next().map(String::as_str),
                };
                if flag == "-n" || flag == "--namespace" {
                    namespace = value.map(str::to_string);
                }
                pending = match value {
                    None => Some(flag),
                    Some(_) => None,
                };
            }
            continue;
        }
        match sub {
            None => sub = tree.find_subcommand(word),
            Some(_) => positionals.push(word),
        }
    }
    let Some(sub) = sub else { return Slot::Other };
    let takes_release = sub
        .get_positionals()
        .next()
        .is_some_and(|a| a.get_id() == "release");
    if !takes_release {
        return Slot::Other;
    }
    let release = |p: &str| match (&namespace, p.contains('/')) {
        (Some(ns), false) => format!("{ns}/{p}"),
        _ => p.to_string(),
    };
    if let Some(flag) = pending {
        return match positionals.first() {
            Some(r) if RENDER_OPTIONS.contains(&flag) => Slot::Entry(release(r), namespace),
            _ => Slot::Other,
        };
    }
    match positionals.len() {
        0 => Slot::Release(namespace),
        // The positionals after the release that name a render.
        n if sub.get_positionals().nth(n).is_some_and(|a| {
            ["render_ref", "from", "to", "entry"].contains(&a.get_id().as_str())
        }) =>
        {
            Slot::Entry(release(positionals[0]), namespace)
        }
        _ => Slot::Other,
    }
}

/// `__complete -- WORDS… CURRENT`: prints the candidates for CURRENT, one a line, that
/// the store knows (nothing when the word is not a release or a render, or the store
/// cannot say within a few seconds).
pub async fn complete(ctx: &Context<'_>, words: &[String]) -> Result<()> {
    let Some((current, before)) = words.split_last() else {
        return Ok(());
    };
    let candidates = match slot(before) {
        Slot::Other => return Ok(()),
        Slot::Release(namespace) => {
            let store = ctx.open().await?.with_timeout(COMPLETE_TIMEOUT);
            let found = render_store::fleet::all_releases(&store, namespace.as_deref()).await?;
            found
                .releases
                .iter()
                .map(|r| match &namespace {
                    Some(_) => r.name.clone(),
                    None => r.to_string(),
                })
                .collect::<Vec<_>>()
        }
        Slot::Entry(release, namespace) => {
            let store = ctx.open().await?.with_timeout(COMPLETE_TIMEOUT);
            let release = super::parse_release(&release, namespace.as_deref())?;
            let history = names::history_keys(&store, &release).await?;
            (0..history.len()).map(|n| format!("@{n}")).collect()
        }
    };
    let mut out = std::io::stdout().lock();
    for candidate in candidates
        .iter()
        .filter(|c| c.starts_with(current.as_str()))
    {
        writeln!(out, "{candidate}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot_of(line: &str) -> Slot {
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        slot(&words)
    }

    #[test]
    fn the_word_being_typed_is_read_as_clap_reads_the_line() {
        assert_eq!(slot_of("get"), Slot::Release(None));
        assert_eq!(slot_of("-n prod diff"), Slot::Release(Some("prod".into())));
        assert_eq!(
            slot_of("--render-store-url mem:// history"),
            Slot::Release(None)
        );
        assert_eq!(
            slot_of("diff prod/app"),
            Slot::Entry("prod/app".into(), None)
        );
        assert_eq!(
            slot_of("diff -n prod app @1"),
            Slot::Entry("prod/app".into(), Some("prod".into()))
        );
        assert_eq!(
            slot_of("gc prod/app --keep 3 --protect"),
            Slot::Entry("prod/app".into(), None)
        );
        assert_eq!(
            slot_of("history prod/app --running"),
            Slot::Entry("prod/app".into(), None)
        );
        assert_eq!(
            slot_of("delete-entry prod/app"),
            Slot::Entry("prod/app".into(), None)
        );
        // A value of an option that is not a render, a command without a release, a
        // put's files, a diff's third positional: nothing from the store.
        assert_eq!(slot_of("gc prod/app --keep"), Slot::Other);
        assert_eq!(slot_of("ls"), Slot::Other);
        assert_eq!(slot_of("put prod/app"), Slot::Other);
        assert_eq!(slot_of("diff prod/app @1 @0"), Slot::Other);
        assert_eq!(slot_of(""), Slot::Other);
    }
}
