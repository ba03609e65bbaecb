//! The `lakecore` command-line tool run as a binary (feature `cli`): the `blob`, `footer`,
//! `sidecar`, `scan` and `demo` subcommands, their JSON shapes and their exit codes.

mod blob;
mod footer;
mod footer_crypt;
mod footer_read;
mod hardening;
mod scan;
mod sidecar;
