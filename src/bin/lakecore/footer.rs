//! `lakecore footer`: convert standard Parquet footers to modular footers, inspect them, and
//! read one column's placement.

use crate::footer_crypt;
use crate::util::outln;
use crate::util::{read, refuse_output_over_input, write_atomic, CliResult, Failure};
use lakecore::footer::{convert, to_standard, ModularFooter, Module, ModuleEncoding};
use std::fmt::Write as _;
use std::path::PathBuf;

/// Options of `lakecore footer`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Rewrite a standard Parquet file with a modular footer (data pages unchanged), or with
    /// `--to-standard` a modular-footer file back to a standard Parquet file.
    Convert {
        /// The standard Parquet file (with `--to-standard`: the file with a modular footer).
        input: PathBuf,
        /// Where to write the converted file.
        #[arg(short, long)]
        output: PathBuf,
        /// Convert a modular-footer file back to a standard Parquet file (page indexes and a
        /// Thrift `FileMetaData` footer rebuilt, data pages and Bloom filters unchanged).
        #[arg(long, conflicts_with_all = ["encrypt_columns", "key_file"])]
        to_standard: bool,
        /// Encrypt the statistics and column indexes of these columns (leaf names, dotted,
        /// or indexes; needs --key-file).
        #[arg(long, value_delimiter = ',', requires = "key_file")]
        encrypt_columns: Vec<String>,
        /// Keys for --encrypt-columns: `ID=HEX` per line; a column uses the key named like
        /// it, else the key `footer`.
        #[arg(long)]
        key_file: Option<PathBuf>,
    },
    /// Print the root counts and the module directory.
    Inspect {
        /// A file with a modular footer.
        file: PathBuf,
        /// Print JSON.
        #[arg(long, conflicts_with = "key_file")]
        json: bool,
        /// Decrypt and print the statistics of encrypted columns with these keys (`ID=HEX`
        /// per line; text output).
        #[arg(long)]
        key_file: Option<PathBuf>,
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

/// The format the subcommand reads: standard Parquet for `convert`, modular for the others.
pub fn expected_format(args: &Args) -> lakecore::sniff::Format {
    match args.command {
        Command::Convert {
            to_standard: true, ..
        } => lakecore::sniff::Format::ModularParquet,
        Command::Convert { .. } => lakecore::sniff::Format::StandardParquet,
        _ => lakecore::sniff::Format::ModularParquet,
    }
}

/// The context of a `convert` error: the path, so the error line names what the file is and
/// which command reads it (`util::Failure`: a modular file given to `convert`, a standard one
/// given to `--to-standard`); for a file that starts like Parquet but has no footer magic at
/// its end, the path plus that it looks truncated (the generic hint would only say "no format
/// lakecore knows").
fn convert_context(input: &std::path::Path, bytes: &[u8]) -> String {
    let file = input.display();
    if lakecore::sniff::sniff(bytes) == lakecore::sniff::Format::Unknown
        && bytes.starts_with(b"PAR1")
    {
        return format!(
            "{file}: starts like Parquet (PAR1) but ends in no footer magic ({} bytes): \
             truncated or still being written? Convert the complete file",
            bytes.len()
        );
    }
    file.to_string()
}

/// Runs a `footer` subcommand.
pub fn run(args: &Args) -> CliResult {
    match &args.command {
        Command::Convert {
            input,
            output,
            to_standard: true,
            ..
        } => {
            refuse_output_over_input(output, &[input])?;
            let bytes = read(input)?;
            let standard = to_standard(&bytes)
                .map_err(|e| Failure::invalid(convert_context(input, &bytes), e))?;
            write_atomic(output, &standard)?;
            outln!(
                "{} -> {}: standard Parquet footer, {} bytes of metadata",
                input.display(),
                output.display(),
                lakecore::footer::standard_footer_range(&standard)
                    .map_or(0, |(start, _)| standard.len() - start)
            );
            Ok(())
        }
        Command::Convert {
            input,
            output,
            encrypt_columns,
            key_file,
            ..
        } => {
            refuse_output_over_input(output, &[input])?;
            let bytes = read(input)?;
            let converted = match key_file {
                Some(keys) if !encrypt_columns.is_empty() => {
                    footer_crypt::convert_encrypted(input, &bytes, encrypt_columns, keys)?
                }
                _ => convert(&bytes)
                    .map_err(|e| Failure::invalid(convert_context(input, &bytes), e))?,
            };
            write_atomic(output, &converted)?;
            let footer = ModularFooter::parse(&converted)
                .map_err(|e| Failure::invalid(output.display(), e))?;
            outln!(
                "{} -> {}: {} columns, {} row groups, {} bytes of modular metadata",
                input.display(),
                output.display(),
                footer.num_columns(),
                footer.num_row_groups(),
                footer.file_len() - footer.metadata_start()
            );
            Ok(())
        }
        Command::Inspect {
            file,
            json,
            key_file,
        } => {
            let bytes = read(file)?;
            let f =
                ModularFooter::parse(&bytes).map_err(|e| Failure::invalid(file.display(), e))?;
            let encryption = footer_crypt::inspect_encryption(file, &f, key_file.as_deref())?;
            outln!("{}", inspect(&f, *json));
            if !*json && !encryption.is_empty() {
                outln!("{encryption}");
            }
            Ok(())
        }
        Command::Placement { file, column, json } => {
            let bytes = read(file)?;
            let f =
                ModularFooter::parse(&bytes).map_err(|e| Failure::invalid(file.display(), e))?;
            if *column >= f.num_columns() {
                return Err(Failure::Usage(format!(
                    "column {column} out of range: the file has {} columns",
                    f.num_columns()
                )));
            }
            let text =
                placement(&f, *column, *json).map_err(|e| Failure::invalid(file.display(), e))?;
            outln!("{text}");
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
        Module::RowGroups => "ROW_GROUPS",
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
