//! `render-store`: the command line of the convoy render store.

use std::process::ExitCode;

fn main() -> ExitCode {
    render_store_cli::entry::main()
}
