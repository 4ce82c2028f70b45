//! `render-store`: the command line of the convoy render store.

use clap::Parser;
use render_store_cli::{cli, terminal};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("RENDER_STORE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("render-store: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(cli::run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Errors carry keys and text from the store, and other libraries' messages
            // may name a request URL with its signature.
            let message = render_store::redact_urls_in(&format!("{e:#}"));
            eprintln!("render-store: {}", terminal::escape_for_terminal(&message));
            ExitCode::FAILURE
        }
    }
}
