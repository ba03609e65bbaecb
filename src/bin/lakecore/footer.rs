//! `lakecore footer`: convert standard Parquet footers to modular footers, inspect them, and
//! read one column's placement.

use crate::util::{CliResult, Failure};
use lakecore::footer::{
    convert, standard_footer_range, synthetic_standard_file, ModularFooter, Module, ModuleEncoding,
};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Options of `lakecore footer`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Rewrite a standard Parquet file with a modular footer (data pages unchanged).
    Convert {
        /// The standard Parquet file.
        input: PathBuf,
        /// Where to write the converted file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Print the root counts and the module directory.
    Inspect {
        /// A file with a modular footer.
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the placement of one column in every row group.
    Placement {
        /// A file with a modular footer.
        file: PathBuf,
        /// The leaf column index.
        #[arg(long)]
        column: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| Failure::io(path.display(), e))
}

/// Runs a `footer` subcommand.
pub fn run(args: &Args) -> CliResult {
    match &args.command {
        Command::Convert { input, output } => {
            let bytes = read(input)?;
            let converted = convert(&bytes).map_err(|e| Failure::invalid(input.display(), e))?;
            std::fs::write(output, &converted).map_err(|e| Failure::io(output.display(), e))?;
            let footer = ModularFooter::new(&converted, 0)
                .map_err(|e| Failure::invalid(output.display(), e))?;
            println!(
                "{} -> {}: {} columns, {} row groups, {} bytes of modular metadata",
                input.display(),
                output.display(),
                footer.num_columns(),
                footer.num_row_groups(),
                footer.file_len() - footer.metadata_start()
            );
            Ok(())
        }
        Command::Inspect { file, json } => {
            let bytes = read(file)?;
            let f =
                ModularFooter::new(&bytes, 0).map_err(|e| Failure::invalid(file.display(), e))?;
            println!("{}", inspect(&f, *json));
            Ok(())
        }
        Command::Placement { file, column, json } => {
            let bytes = read(file)?;
            let f =
                ModularFooter::new(&bytes, 0).map_err(|e| Failure::invalid(file.display(), e))?;
            if *column >= f.num_columns() {
                return Err(Failure::Usage(format!(
                    "column {column} out of range: the file has {} columns",
                    f.num_columns()
                )));
            }
            let text =
                placement(&f, *column, *json).map_err(|e| Failure::invalid(file.display(), e))?;
            println!("{text}");
            Ok(())
        }
    }
}

/// The name of a module as in the profile.
pub fn module_name(m: Module) -> &'static str {
    match m {
        Module::Schema => "SCHEMA",
        Module::Placement => "PLACEMENT",
        Module::RowGroupStats => "ROW_GROUP_STATS",
        Module::OffsetIndex => "OFFSET_INDEX",
        Module::ColumnIndex => "COLUMN_INDEX",
        Module::FileMetadata => "FILE_METADATA",
    }
}

fn encoding_name(e: ModuleEncoding) -> &'static str {
    match e {
        ModuleEncoding::Thrift => "THRIFT",
        ModuleEncoding::ArrayPages => "ARRAY_PAGES",
    }
}

/// `inspect` output: `{"num_row_groups":G,"num_columns":C,"num_rows":N,"metadata_bytes":B,
/// "modules":[{"module":"PLACEMENT","encoding":"ARRAY_PAGES","offset":O,"length":L}]}`.
pub fn inspect(f: &ModularFooter<'_>, json: bool) -> String {
    let mut s = String::new();
    let meta = f.file_len() - f.metadata_start();
    if json {
        let _ = write!(
            s,
            "{{\"num_row_groups\":{},\"num_columns\":{},\"num_rows\":{},\"metadata_bytes\":{},\"modules\":[",
            f.num_row_groups(),
            f.num_columns(),
            f.num_rows(),
            meta
        );
        for (i, m) in f.modules().enumerate() {
            let _ = write!(
                s,
                "{}{{\"module\":\"{}\",\"encoding\":\"{}\",\"offset\":{},\"length\":{}}}",
                if i > 0 { "," } else { "" },
                module_name(m.module),
                encoding_name(m.encoding),
                m.offset,
                m.length
            );
        }
        s.push_str("]}");
    } else {
        let _ = writeln!(
            s,
            "{} row groups, {} columns, {} rows, {} bytes of modular metadata",
            f.num_row_groups(),
            f.num_columns(),
            f.num_rows(),
            meta
        );
        for m in f.modules() {
            let _ = writeln!(
                s,
                "  {:<16} {:<11} offset {:>12} length {:>10}",
                module_name(m.module),
                encoding_name(m.encoding),
                m.offset,
                m.length
            );
        }
        s.pop();
    }
    s
}

/// `placement` output (see the issue for the JSON shape).
pub fn placement(f: &ModularFooter<'_>, column: u32, json: bool) -> lakecore::Result<String> {
    let mut s = String::new();
    if json {
        let _ = write!(s, "{{\"column\":{column},\"chunks\":[");
    } else {
        let _ = writeln!(s, "column {column}");
    }
    for g in 0..f.num_row_groups() {
        let p = f.chunk_placement(column, g)?;
        let mut dict = String::new();
        for (i, d) in p.dictionary_pages.iter().enumerate() {
            let _ = write!(dict, "{}{}", if i > 0 { "," } else { "" }, d?);
        }
        if json {
            let _ = write!(
                s,
                "{}{{\"row_group\":{g},\"data_page_offset\":{},\"dictionary_page_offsets\":[{dict}],\"total_compressed_size\":{},\"total_uncompressed_size\":{},\"num_values\":{},\"codec\":{}}}",
                if g > 0 { "," } else { "" },
                p.data_page_offset,
                p.total_compressed_size,
                p.total_uncompressed_size,
                p.num_values,
                p.codec
            );
        } else {
            let _ = writeln!(
                s,
                "  row group {g}: data page {} dictionary [{dict}] compressed {} uncompressed {} values {} codec {}",
                p.data_page_offset,
                p.total_compressed_size,
                p.total_uncompressed_size,
                p.num_values,
                p.codec
            );
        }
    }
    if json {
        s.push_str("]}");
    } else {
        s.pop();
    }
    Ok(s)
}

/// Demo section: convert a generated wide file, then read one column's placement from the
/// modular footer and from a full decode of the standard footer by the `parquet` crate.
pub fn demo(summary: &mut crate::demo::Summary) -> CliResult {
    use std::hint::black_box;
    use std::time::Instant;
    let (columns, row_groups) = (5_000usize, 10usize);
    println!("\n== Parquet modular footer: {columns} columns x {row_groups} row groups");
    let standard = synthetic_standard_file(columns, row_groups, 7);
    let (start, len) = standard_footer_range(&standard).map_err(|e| Failure::invalid("demo", e))?;
    let modular = convert(&standard).map_err(|e| Failure::invalid("demo", e))?;
    let footer = ModularFooter::new(&modular, 0).map_err(|e| Failure::invalid("demo", e))?;
    let meta = footer.file_len() - footer.metadata_start();
    println!(
        "standard footer {len} B, modular footer {meta} B ({:.2}x), data region {start} B unchanged",
        meta as f64 / len as f64
    );
    let column = (columns / 2) as u32;
    let reps = 20;
    let t = Instant::now();
    let mut sum = 0u64;
    let standard_footer = standard.get(start..start + len).unwrap_or_default();
    for _ in 0..reps {
        let md = parquet::file::metadata::ParquetMetaDataReader::decode_metadata(black_box(
            standard_footer,
        ))
        .map_err(|e| Failure::Usage(format!("demo: parquet crate: {e}")))?;
        for rg in md.row_groups() {
            let c = rg
                .columns()
                .get(column as usize)
                .ok_or_else(|| Failure::Usage("demo: missing column".into()))?;
            sum = sum.wrapping_add(c.data_page_offset() as u64);
        }
    }
    let full = t.elapsed().as_secs_f64() / reps as f64;
    let reps_m = 2000;
    let t = Instant::now();
    let mut sum_m = 0u64;
    for _ in 0..reps_m {
        let f =
            ModularFooter::new(black_box(&modular), 0).map_err(|e| Failure::invalid("demo", e))?;
        for g in 0..row_groups as u32 {
            let p = f
                .chunk_placement(column, g)
                .map_err(|e| Failure::invalid("demo", e))?;
            sum_m = sum_m.wrapping_add(p.data_page_offset);
        }
    }
    let projected = t.elapsed().as_secs_f64() / reps_m as f64;
    if sum / reps as u64 != sum_m / reps_m as u64 {
        return Err(Failure::Usage("demo: placements disagree".into()));
    }
    println!(
        "column {column} placement: parquet crate standard footer decode {:.1} us, modular open + projected read {:.2} us ({:.0}x)",
        full * 1e6,
        projected * 1e6,
        full / projected.max(1e-12)
    );
    let (mut first, mut last, mut compressed) = (u64::MAX, 0u64, 0u64);
    for g in 0..footer.num_row_groups() {
        let p = footer
            .chunk_placement(column, g)
            .map_err(|e| Failure::invalid("demo", e))?;
        first = first.min(p.data_page_offset);
        last = last.max(p.data_page_offset);
        compressed += p.total_compressed_size;
    }
    println!(
        "column {column}: {} chunks, data pages at bytes {first}..={last}, {compressed} compressed bytes (`lakecore footer` prints them all)",
        footer.num_row_groups()
    );
    summary.push(format!(
        "footer: one column's placement {:.2} us from the modular footer vs {:.0} us decoding the standard one ({:.0}x), footer {:.2}x the size",
        projected * 1e6,
        full * 1e6,
        full / projected.max(1e-12),
        meta as f64 / len as f64
    ));
    Ok(())
}
