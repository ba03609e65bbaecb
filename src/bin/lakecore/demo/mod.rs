//! `lakecore demo`: generated data through every format, with throughput figures.
//!
//! Runs without arguments on embedded defaults so a newcomer sees what each layer does. The
//! headline section writes a Paimon table with many manifests and sidecars (see
//! `lakecore::paimon::synth`) to a temporary directory (or `--keep DIR`) and plans typical
//! scans with `lakecore::paimon` exactly as `lakecore scan` does, with and without sidecars.
//! The other sections: codecs, one sidecar in both layouts, BLOB layers, modular footers.
//! A closing summary repeats the key figures.

mod blob;
mod codecs;
mod footer;
mod sidecar;
mod table;

use crate::util::outln;
use crate::util::CliResult;

use std::path::PathBuf;
use std::time::Instant;

/// Options of `lakecore demo`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Values in the synthetic delta stream.
    #[arg(long, default_value_t = 4_000_000)]
    pub values: usize,
    /// Manifests in the generated Paimon table.
    #[arg(long, default_value_t = 300)]
    pub manifests: usize,
    /// Keep the generated table in DIR (created; must not exist yet) instead of a temporary
    /// directory, e.g. to run `lakecore scan DIR` on it afterwards.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
}

/// Key figures collected by the sections for the closing summary.
pub type Summary = Vec<String>;

/// Runs every demo section.
pub fn run(args: &Args) -> CliResult {
    let start = Instant::now();
    outln!(
        "lakecore demo (kernels: {})",
        lakecore::arch::active_kernels().name
    );
    let mut summary = Summary::new();
    table::run(args.manifests, args.keep.as_deref(), &mut summary)?;
    codecs::run(args.values, &mut summary)?;
    sidecar::run(50_000, 200, &mut summary)?;
    blob::run(1_000_000, &mut summary)?;
    footer::run(&mut summary)?;
    outln!("\n== summary ({:.1} s)", start.elapsed().as_secs_f64());
    for line in &summary {
        outln!("  {line}");
    }
    Ok(())
}
