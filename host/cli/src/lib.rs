//! The `render-store` command line over the render-store library: the commands
//! ([`cli`]), how they read renders ([`input`]), what they print ([`output`],
//! [`json_view`], [`terminal`], [`progress`]), the files on paths it is given
//! ([`local_file`]), the fleet listing ([`releases`]), the
//! repair of one history entry ([`delete_entry`]), the observer's HTTP server
//! ([`serve`]) and the demo ([`demo`]). The binary is `src/main.rs`; everything that
//! decides anything about a store is in the library and its component.

#![warn(missing_docs)]

pub mod cli;
pub mod delete_entry;
pub mod demo;
pub mod entry;
pub mod failure;
pub mod input;
pub mod json_view;
pub mod local_file;
pub mod names;
pub mod output;
pub mod progress;
pub mod releases;
pub mod render_sizes;
pub mod serve;
pub mod terminal;
pub mod verify;
