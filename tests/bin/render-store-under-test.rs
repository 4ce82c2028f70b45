//! `render-store` as the end-to-end tests and benchmarks run it: the CLI's own entry
//! point (host/cli/src/main.rs is this same line).

use std::process::ExitCode;

fn main() -> ExitCode {
    render_store_cli::entry::main()
}
