//! The process around a command: standard error's log, the async runtime, the exit
//! status and how errors are printed. `render-store` (src/main.rs) is this alone, and so
//! is the binary the end-to-end tests run (tests/bin), so both are one program.

use crate::{cli, failure, terminal};
use std::process::ExitCode;

/// Runs the command line of this process and gives its exit status.
pub fn main() -> ExitCode {
    let args = cli::Args::parse_args();
    if !args.is_server() {
        end_quietly_when_output_closes();
    }
    // The server's access log is on unless RENDER_STORE_LOG says otherwise: `kubectl
    // logs` of an observer should say what it was asked.
    let default_filter = if args.is_server() {
        format!("warn,{}=info", crate::serve::ACCESS_LOG_TARGET)
    } else {
        "warn".to_string()
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("RENDER_STORE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_filter)),
        )
        .with_writer(std::io::stderr)
        // Escape sequences only for a person's terminal: in a pod's log (`kubectl logs`)
        // or a file they are noise.
        .with_ansi({
            use std::io::IsTerminal;
            std::io::stderr().is_terminal() && !cli::no_color()
        })
        .init();
    // Only the server runs work at once; every other command makes one call after
    // another, and a single-threaded runtime starts without spawning workers.
    let runtime = if args.is_server() {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    }
    .enable_all()
    .build();
    let runtime = match runtime {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("render-store: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    // diff(1)'s convention: 1 says "different", so trouble is 2.
    let error_status = if args.is_diff() {
        ExitCode::from(2)
    } else {
        ExitCode::FAILURE
    };
    let as_json = args.format() == crate::args::OutputFormat::Json;
    // --timeout bounds the whole command: dropping it where it waits drops the store
    // call and the bucket request in flight. `serve` runs until stopped.
    let timeout = Some(args.timeout).filter(|t| !t.is_zero() && !args.is_server());
    let outcome =
        runtime.block_on(async {
            match timeout {
                None => cli::run(args).await,
                Some(limit) => match tokio::time::timeout(limit, cli::run(args)).await {
                    Ok(outcome) => outcome,
                    Err(_) => Err(anyhow::Error::new(render_store::Error::DeadlineExceeded {
                        after: limit,
                    })
                    .context(format!(
                        "the command did not finish within --timeout {} \
                     (RENDER_STORE_TIMEOUT; 0: no limit)",
                        humantime::format_duration(limit)
                    ))),
                },
            }
        });
    if timeout.is_some() {
        // A cut command may leave a blocking task behind (a file:// write finishing in
        // its thread); it gets a moment, not the power to hold the exit.
        runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    } else {
        drop(runtime);
    }
    match outcome {
        Ok(cli::Finish::Done) => ExitCode::SUCCESS,
        Ok(cli::Finish::Differs) => ExitCode::FAILURE,
        Err(e) => {
            // Errors carry keys and text from the store, and other libraries' messages
            // may name a request URL with its signature.
            let mut message = render_store::redact_urls_in(&format!("{e:#}"));
            if let Some(advice) = failure::advice(&e) {
                message.push_str("; ");
                message.push_str(advice);
            }
            if as_json {
                let error = serde_json::json!({
                    "error": { "kind": failure::kind(&e), "message": message }
                });
                eprintln!("{error}");
            } else {
                eprintln!("render-store: {}", terminal::escape_for_terminal(&message));
            }
            error_status
        }
    }
}

/// Lets a closed output pipe end the process quietly, as it ends `cat` or `sha256sum`
/// (`render-store replay t.jsonl | head`): Rust ignores SIGPIPE, so the next write would
/// fail and `println!` would panic with a backtrace. Not for `serve`, whose writes to a
/// closed connection must fail that connection alone.
fn end_quietly_when_output_closes() {
    // SAFETY: restoring a signal's default disposition at start, before any thread
    // exists, has no preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
