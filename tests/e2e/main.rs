//! End-to-end tests of the render store: the component through the wasmtime host, the
//! buckets, and the CLI. One test binary, a module per topic.

mod aliases;
mod browser;
mod cli;
mod component;
mod conformance;
mod controller;
mod corrupt;
mod crashes;
mod deadlines;
mod docs;
mod encryption;
mod fail_closed;
mod faults;
mod gc_skipped;
mod go_peer;
mod gocloud;
mod http;
mod invalid_input;
mod limits;
mod load;
mod observer;
mod operations;
mod operator;
mod progress;
mod race;
mod restore;
mod secrets;
mod serve_bounds;
mod shared_machine;
mod support;
mod traces;
mod urls;
mod vectors;
mod yaml;
