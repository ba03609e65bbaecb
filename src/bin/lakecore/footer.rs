//! `lakecore footer`: convert standard Parquet footers to modular footers, inspect them, and
//! read one column's placement.

use crate::util::{CliResult, Failure};
use lakecore::footer::{convert, ModularFooter, Module, ModuleEncoding};
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
            let converted =
                convert::convert(&bytes).map_err(|e| Failure::invalid(input.display(), e))?;
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

/// A synthetic standard Parquet file: `PAR1`, `columns * row_groups` fake 64-byte chunks,
/// and a classic `FileMetaData` footer (INT64 leaves with statistics, every third chunk with
/// a dictionary page) written with the crate's Thrift writer.
pub fn synthetic_standard_file(columns: usize, row_groups: usize, seed: u64) -> Vec<u8> {
    use lakecore::codec::thrift::{FieldType, Writer};
    const CHUNK: usize = 64;
    let mut rng = crate::demo::Rng::new(seed);
    let mut file = b"PAR1".to_vec();
    file.resize(4 + columns * row_groups * CHUNK, 0);
    let rows = 1000i64;
    let mut w = Writer::new();
    w.struct_begin();
    w.field_i32(1, 2);
    w.field_list(2, FieldType::Struct, columns + 1);
    w.struct_begin();
    w.field_binary(4, b"schema");
    w.field_i32(5, columns as i32);
    w.struct_end();
    for c in 0..columns {
        w.struct_begin();
        w.field_i32(1, 2);
        w.field_i32(3, 1);
        w.field_binary(4, format!("c{c}").as_bytes());
        w.struct_end();
    }
    w.field_i64(3, rows * row_groups as i64);
    w.field_list(4, FieldType::Struct, row_groups);
    for g in 0..row_groups {
        w.struct_begin();
        w.field_list(1, FieldType::Struct, columns);
        for c in 0..columns {
            let start = (4 + (g * columns + c) * CHUNK) as i64;
            let dict = c % 3 == 0;
            w.struct_begin();
            w.field_i64(2, start);
            w.field_struct(3);
            w.field_i32(1, 2);
            w.field_list(2, FieldType::I32, 2);
            w.i32(0);
            w.i32(3);
            w.field_list(3, FieldType::Binary, 1);
            w.binary(format!("c{c}").as_bytes());
            w.field_i32(4, 0);
            w.field_i64(5, rows);
            w.field_i64(6, CHUNK as i64 + (rng.next_u64() % 100) as i64);
            w.field_i64(7, CHUNK as i64);
            w.field_i64(9, if dict { start + 16 } else { start });
            if dict {
                w.field_i64(11, start);
            }
            w.field_struct(12);
            w.field_i64(3, (rng.next_u64() % 10) as i64);
            let lo = (rng.next_u64() % 1_000_000) as i64;
            w.field_binary(5, &(lo + 999).to_le_bytes());
            w.field_binary(6, &lo.to_le_bytes());
            w.struct_end();
            w.struct_end();
            w.struct_end();
        }
        w.field_i64(2, (columns * CHUNK) as i64);
        w.field_i64(3, rows);
        w.struct_end();
    }
    w.field_binary(6, b"lakecore demo");
    w.struct_end();
    let footer = w.into_bytes();
    file.extend_from_slice(&footer);
    file.extend_from_slice(&(footer.len() as u32).to_le_bytes());
    file.extend_from_slice(b"PAR1");
    file
}

/// Demo section: convert a generated wide file, then read one column's placement from the
/// modular footer and from a full decode of the standard footer.
pub fn demo() -> CliResult {
    use std::hint::black_box;
    use std::time::Instant;
    let (columns, row_groups) = (5_000usize, 10usize);
    println!("\n== Parquet modular footer: {columns} columns x {row_groups} row groups");
    let standard = synthetic_standard_file(columns, row_groups, 7);
    let (start, len) =
        convert::standard_footer_range(&standard).map_err(|e| Failure::invalid("demo", e))?;
    let modular = convert::convert(&standard).map_err(|e| Failure::invalid("demo", e))?;
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
    for _ in 0..reps {
        let (input, _) = convert::read_standard(black_box(&standard))
            .map_err(|e| Failure::invalid("demo", e))?;
        for g in 0..row_groups {
            sum = sum.wrapping_add(input.chunks[column as usize * row_groups + g].data_page_offset);
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
        "column {column} placement: full standard decode {:.1} us, modular open + projected read {:.2} us ({:.0}x)",
        full * 1e6,
        projected * 1e6,
        full / projected.max(1e-12)
    );
    println!(
        "{}",
        placement(&footer, column, true).map_err(|e| Failure::invalid("demo", e))?
    );
    Ok(())
}
