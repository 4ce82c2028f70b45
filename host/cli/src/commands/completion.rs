//! `completion` and `man`: the shell completion scripts and the manual page, made from
//! the argument definitions.

use crate::args::command;
use anyhow::Result;

/// Writes the completion script of `shell`.
pub fn script(shell: clap_complete::Shell) -> Result<()> {
    clap_complete::generate(
        shell,
        &mut command(),
        "render-store",
        &mut std::io::stdout(),
    );
    Ok(())
}

/// Writes the manual page (roff).
pub fn man() -> Result<()> {
    clap_mangen::Man::new(command()).render(&mut std::io::stdout())?;
    Ok(())
}
