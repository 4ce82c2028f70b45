//! The `render-store` command line over the render-store library, laid out as ripgrep's
//! and jaq's are: the arguments ([`args`]), a short dispatch ([`cli`]), one module per
//! command ([`commands`]); how commands read renders ([`input`]) and name releases and
//! entries ([`names`]); what they print ([`output`], [`json_view`], [`terminal`],
//! [`progress`]); the files on paths they are given ([`local_file`]); the observer's
//! HTTP server and web pages ([`serve`]). The binary is `src/main.rs` over [`entry`];
//! everything that decides anything about a store is in the library and its component.

#![warn(missing_docs)]

pub mod args;
pub mod cli;
pub mod commands;
pub mod entry;
pub mod failure;
pub mod input;
pub mod json_view;
pub mod local_file;
pub mod names;
pub mod output;
pub mod progress;
pub mod render_sizes;
pub mod serve;
pub mod terminal;
pub mod time_view;
pub mod time_window;
