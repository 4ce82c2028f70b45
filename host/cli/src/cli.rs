//! The dispatch: the global options checked and turned into a [`Context`], then the
//! command's module ([`crate::commands`]) does the work. The arguments are
//! [`crate::args`].

use crate::args::{Command, MIB, OutputFormat, StoreCommand};
use crate::commands::{self, Context, Keys};
use anyhow::{Context as _, Result, bail};
use render_store::{Limits, Runtime, SecretValues};

pub use crate::args::{Args, command, no_color};
pub use crate::commands::Finish;

/// Runs the command `args` names, printing its output to standard output.
pub async fn run(args: Args) -> Result<Finish> {
    let keys = Keys {
        file: args.encryption_keys.as_deref(),
        required: args.encryption_required,
    };
    // Before anything is read, whichever command: the flag promises what only a keyring
    // can keep.
    if keys.required && keys.file.is_none() {
        bail!(
            "--encryption-required (RENDER_STORE_ENCRYPTION_REQUIRED) needs a keyring: every \
             render blob must open under one of its keys; give --encryption-keys FILE or set \
             RENDER_STORE_ENCRYPTION_KEYS"
        );
    }
    let format = args.format();
    check_format(format, &args.command)?;
    let limits = Limits {
        memory_bytes: args
            .memory_cap_mib
            .checked_mul(MIB)
            .filter(|&b| b > 0)
            .context("--memory-cap-mib must be at least 1 and fit this machine's address space")?,
        fuel: args.fuel,
        concurrent_calls: args.max_concurrent_calls.unwrap_or(if args.is_server() {
            Limits::DEFAULT_CONCURRENT_CALLS
        } else if args.is_fleet() {
            render_store::fleet::FLEET_CONCURRENCY as u32
        } else {
            1
        }),
    };
    Runtime::init_shared(limits)?;
    let ctx = Context {
        url: &args.render_store_url,
        keys,
        namespace: args.namespace.as_deref(),
        format,
        secrets: if args.show_secrets {
            SecretValues::Shown
        } else {
            SecretValues::Masked
        },
        quiet: args.quiet,
    };
    let ctx = &ctx;
    match args.command {
        Command::Ref { input } => commands::inspect::render_ref(ctx, input).await?,
        Command::Canonical { input } => commands::inspect::canonical(input).await?,
        Command::Store(command) => {
            let trace = command.trace().cloned();
            match command {
                StoreCommand::History {
                    release,
                    limit: Some(limit),
                    before,
                    running,
                    ..
                } => {
                    let trace = trace.as_deref();
                    let (before, running) = (before.as_deref(), running.as_deref());
                    commands::history::page(ctx, &release, limit, before, trace, running).await?
                }
                StoreCommand::DeleteRelease {
                    release,
                    dry_run: true,
                    ..
                } => {
                    if trace.is_some() {
                        bail!(
                            "--trace records what delete-release deletes; --dry-run deletes \
                             nothing"
                        );
                    }
                    commands::delete_release::dry_run(ctx, &release).await?
                }
                command => return commands::operation::run(ctx, command, trace).await,
            }
        }
        Command::Releases { limit, after } => {
            return commands::releases::run(ctx, limit, after.as_deref()).await;
        }
        Command::Images {
            pattern,
            since,
            until,
        } => {
            let (since, until) = (since.as_deref(), until.as_deref());
            return commands::images::run(ctx, pattern.as_deref(), since, until).await;
        }
        Command::Blame {
            release,
            object,
            field,
        } => commands::blame::run(ctx, &release, &object, field.as_deref()).await?,
        Command::Export { since, until } => {
            let (since, until) = (since.as_deref(), until.as_deref());
            return commands::export::run(ctx, since, until).await;
        }
        Command::Changes { since, until } => {
            return commands::changes::run(ctx, &since, until.as_deref()).await;
        }
        Command::Reindex { release, force } => {
            return commands::reindex::run(ctx, release.as_deref(), force).await;
        }
        Command::Authenticate { release, .. } => {
            return commands::authenticate::run(ctx, release.as_deref()).await;
        }
        Command::Ls { prefix } => commands::ls::run(ctx, &prefix).await?,
        Command::Component { out } => commands::component::run(ctx, &out)?,
        Command::Rekey { release, .. } => commands::rekey::run(ctx, release.as_deref()).await?,
        Command::DeleteEntry {
            release,
            entry,
            dry_run,
        } => commands::delete_entry::run(ctx, &release, &entry, dry_run).await?,
        Command::Verify { release } => {
            return commands::verify::run(ctx, release.as_deref()).await;
        }
        Command::Completion { shell } => commands::completion::script(shell)?,
        Command::Man => commands::completion::man()?,
        Command::Complete { words } => commands::completion::complete(ctx, &words).await?,
        Command::Diff(diff) => return commands::diff::run(ctx, diff).await,
        Command::Serve(serve) => commands::serve::run(ctx, serve).await?,
        Command::Replay { file } => {
            commands::replay::run(ctx, &file, limits.memory_bytes as u64).await?
        }
        Command::Demo => commands::demo::run(ctx.url, ctx.as_json()).await?,
    }
    Ok(Finish::Done)
}

/// Refuses an output format the command does not have, before anything is read.
fn check_format(format: OutputFormat, command: &Command) -> Result<()> {
    if format == OutputFormat::Yaml && !matches!(command, Command::Store(StoreCommand::Get { .. }))
    {
        bail!("-o yaml is for `get` (the render as YAML documents); use -o json or -o text");
    }
    if format == OutputFormat::Wide
        && !matches!(command, Command::Store(StoreCommand::History { .. }))
    {
        bail!("-o wide is for `history` (positions and sizes); use -o text or -o json");
    }
    if format == OutputFormat::Ndjson && !matches!(command, Command::Export { .. }) {
        bail!("-o ndjson is for `export` (one JSON object a line); use -o text or -o json");
    }
    if matches!(command, Command::Export { .. })
        && !matches!(format, OutputFormat::Text | OutputFormat::Ndjson)
    {
        bail!("export writes one JSON object a line: give -o ndjson (or no -o)");
    }
    Ok(())
}
