//! `diff`: what changed from one render to another, or to the render in local files,
//! with each side named by its history entry.

use super::{Context, Finish};
use crate::args::{DiffArgs, DiffOutput};
use crate::input::read_render;
use crate::json_view::diff_json;
use crate::names;
use crate::output::{print_diff, print_json};
use crate::terminal::escape_for_terminal as esc;
use anyhow::Result;
use render_store::bucket::messages::quote;
use render_store::{DEFAULT_CONTEXT, ObjectForm, Observer, Release, RenderStore};

/// Prints the diff `args` asks for; [`Finish::Differs`] when the renders differ.
pub async fn run(ctx: &Context<'_>, args: DiffArgs) -> Result<Finish> {
    let DiffArgs {
        release: _,
        from,
        to,
        against,
        local,
        format: input_format,
        allow_empty,
        validate,
        form,
        color,
    } = &args;
    let release = ctx.release(&args.release)?;
    let store = ctx.open().await?;
    // One listing of the history serves every @N name and the header's labels; an
    // entry in it says the release exists, else one bounded call checks.
    let history = names::history_keys(&store, &release).await?;
    if history.is_empty() {
        names::require_release(&store, &release).await?;
    }
    let rt = store.runtime().clone();
    let object_form = match form {
        DiffOutput::Yaml => ObjectForm::Yaml,
        DiffOutput::Json => ObjectForm::Json,
    };
    let (from_ref, to_ref) = if local.is_empty() {
        let from = from.as_deref().unwrap_or("@1");
        let to = to.as_deref().unwrap_or("@0");
        (
            names::resolve_ref_in(&store, &release, &history, from).await?,
            Some(names::resolve_ref_in(&store, &release, &history, to).await?),
        )
    } else {
        (
            names::resolve_ref_in(
                &store,
                &release,
                &history,
                against.as_deref().unwrap_or("@0"),
            )
            .await?,
            None,
        )
    };
    // The --local render, read and checked before anything is compared.
    let local_render = match &to_ref {
        Some(_) => None,
        None => {
            let mut render =
                read_render(&rt, local, *input_format, rt.limits().memory_bytes).await?;
            render.check(&rt, *allow_empty, *validate).await?;
            Some(render)
        }
    };
    let observer = Observer::new(Some(store))?.with_secrets(ctx.secrets);
    let mut local_render = local_render;
    let diff = match (&to_ref, &mut local_render) {
        (Some(to_ref), _) => {
            observer
                .diff(
                    &release,
                    to_ref,
                    Some(&from_ref),
                    object_form,
                    DEFAULT_CONTEXT,
                )
                .await?
        }
        (None, Some(render)) => {
            let canonical = match rt.canonical_in(&mut render.objects).await {
                Ok(c) => c,
                Err(e) => return Err(render.name_input(e)),
            };
            // The canonical bytes are what is compared: the input's buffer goes.
            render.objects = render_store::JoinedObjects::default();
            observer
                .diff_local(
                    &release,
                    &canonical,
                    Some(&from_ref),
                    object_form,
                    DEFAULT_CONTEXT,
                )
                .await?
        }
        (None, None) => unreachable!("a --local diff reads its render above"),
    };
    let same = diff.added.is_empty() && diff.removed.is_empty() && diff.changed.is_empty();
    if ctx.as_json() {
        // The shape the HTTP /diff and the packages' diffs give.
        print_json(&diff_json(&diff))?;
    } else {
        // Only the header for people names the sides by their history entries: the
        // newest entry of each side's render, and nothing else, is read.
        let store = observer
            .store()
            .expect("the observer was made over the store");
        let sides = [Some(&from_ref), to_ref.as_ref()];
        let described = describe_sides(store, &release, &history, sides).await?;
        let [from_side, to_side] = described;
        let to_side = match (to_side, &local_render) {
            (Some(side), _) => side,
            (None, render) => format!(
                "local {}",
                render
                    .as_ref()
                    .map(|r| r.inputs.join(", "))
                    .unwrap_or_default()
            ),
        };
        println!("--- {}", esc(&from_side.unwrap_or_default()));
        println!("+++ {}", esc(&to_side));
        print_diff(&diff, color.enabled())?;
    }
    if !same {
        return Ok(Finish::Differs);
    }
    Ok(Finish::Done)
}

/// How each side of a diff is named in its header: the renderRef, with its place in the
/// history (counted in the listing), its newest entry's time and summary when it has
/// one. Only those entries are read (one read each).
async fn describe_sides(
    store: &RenderStore,
    release: &Release,
    history: &[names::ListedEntry],
    refs: [Option<&String>; 2],
) -> Result<[Option<String>; 2]> {
    let rt = store.runtime();
    let found: Vec<Option<(usize, &names::ListedEntry)>> = refs
        .iter()
        .map(|r| {
            let r = (*r)?;
            history
                .iter()
                .rev()
                .enumerate()
                .find(|(_, e)| &e.render_ref == r)
        })
        .collect();
    let mut keys: Vec<String> = found.iter().flatten().map(|(_, e)| e.key.clone()).collect();
    keys.dedup();
    let read = store.read_history_entries(release, &keys).await?;
    let summaries: std::collections::HashMap<&String, Result<&str, &str>> = keys
        .iter()
        .zip(&read)
        .map(|(k, r)| {
            let summary = match r {
                render_store::EntryRead::Entry(e) => Ok(e.summary.as_str()),
                render_store::EntryRead::Corrupt(m) => Err(m.as_str()),
                render_store::EntryRead::Gone => Ok(""),
            };
            (k, summary)
        })
        .collect();
    let mut out = [None, None];
    for ((slot, r), found) in out.iter_mut().zip(refs).zip(found) {
        let Some(r) = r else { continue };
        *slot = Some(match found {
            Some((n, entry)) => {
                let time = rt.format_synced_at(entry.synced_at).await?;
                let summary = match summaries.get(&entry.key) {
                    Some(Ok("")) | None => String::new(),
                    Some(Ok(summary)) => format!(", {}", quote(summary)),
                    Some(Err(_)) => ", its entry does not read".to_string(),
                };
                format!("{r} (@{n}, synced {time}{summary})")
            }
            None => format!("{r} (not in the history)"),
        });
    }
    Ok(out)
}
