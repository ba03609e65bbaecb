//! `lakecore footer convert --encrypt-columns ... --key-file K` and `footer inspect
//! --key-file K`: statistics encryption (`lakecore::footer::crypt`) from the command line.
//!
//! Key file: one `ID=HEX` per line (16 or 32 bytes of key in hex), `#` comments and blank
//! lines ignored. `ID` is stored in the file as the key metadata. `convert` protects each
//! listed column with the key whose ID is the column's name, else with the key `footer`.

use crate::util::{hex, read, Failure};
use lakecore::footer::{
    ColumnEncryption, CryptError, CryptErrorKind, EncryptionConfig, FooterInput, ModularFooter,
    StaticKeys,
};
use lakecore::{Error, ErrorKind};
use std::fmt::Write as _;
use std::path::Path;

/// The ID of the footer key in a key file.
const FOOTER_ID: &str = "footer";

/// A key file: (ID, key) in file order.
pub fn read_key_file(path: &Path) -> Result<Vec<(String, Vec<u8>)>, Failure> {
    let text = String::from_utf8(read(path)?).map_err(|_| {
        Failure::Usage(format!(
            "{}: a key file is text: ID=HEX per line",
            path.display()
        ))
    })?;
    let mut keys = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: &str| {
            Failure::Usage(format!(
                "{}:{}: {why} (expected ID=HEX)",
                path.display(),
                n + 1
            ))
        };
        let (id, hex_key) = line.split_once('=').ok_or_else(|| bad("no '='"))?;
        let key = parse_hex(hex_key.trim()).ok_or_else(|| bad("the key is not hex"))?;
        if key.len() != 16 && key.len() != 32 {
            return Err(bad("the key is not 16 or 32 bytes (32 or 64 hex digits)"));
        }
        keys.push((id.trim().to_string(), key));
    }
    Ok(keys)
}

fn parse_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn retriever(keys: &[(String, Vec<u8>)]) -> StaticKeys {
    keys.iter()
        .fold(StaticKeys::new(), |k, (id, key)| k.with(id.as_bytes(), key))
}

/// Leaf paths joined with '.', in leaf order.
fn leaf_names(f: &ModularFooter<'_>) -> lakecore::Result<Vec<String>> {
    let mut names = Vec::new();
    for leaf in f.schema()?.leaves() {
        let leaf = leaf?;
        let parts: Vec<String> = leaf
            .path()
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        names.push(parts.join("."));
    }
    Ok(names)
}

/// `convert` with `--encrypt-columns`: the converted file with the listed columns'
/// statistics and column indexes encrypted.
pub fn convert_encrypted(
    input: &Path,
    bytes: &[u8],
    columns: &[String],
    key_file: &Path,
) -> Result<Vec<u8>, Failure> {
    let keys = read_key_file(key_file)?;
    let (footer_input, data_end): (FooterInput, usize) =
        lakecore::footer::read_standard(bytes).map_err(|e| Failure::invalid(input.display(), e))?;
    let mut plain = bytes.get(..data_end).unwrap_or_default().to_vec();
    let base = plain.len();
    footer_input
        .write(&mut plain)
        .map_err(|e| Failure::invalid(input.display(), e))?;
    let names = {
        let f = ModularFooter::parse(&plain).map_err(|e| Failure::invalid(input.display(), e))?;
        leaf_names(&f).map_err(|e| Failure::invalid(input.display(), e))?
    };
    plain.truncate(base);
    let key_of = |id: &str| keys.iter().find(|(k, _)| k == id).map(|(_, v)| v.clone());
    let mut config = EncryptionConfig {
        footer_key: key_of(FOOTER_ID),
        footer_key_metadata: Some(FOOTER_ID.as_bytes().to_vec()),
        ..EncryptionConfig::default()
    };
    for name in columns {
        let c = names
            .iter()
            .position(|n| n == name)
            .or_else(|| name.parse::<usize>().ok().filter(|&i| i < names.len()))
            .ok_or_else(|| {
                Failure::Usage(format!(
                    "--encrypt-columns: no column '{name}' in {} (leaves: {})",
                    input.display(),
                    names.join(", ")
                ))
            })?;
        let leaf = names.get(c).cloned().unwrap_or_default();
        let entry = match key_of(&leaf) {
            Some(key) => ColumnEncryption::with_key(c as u32, key, leaf.into_bytes()),
            None if config.footer_key.is_some() => ColumnEncryption::with_footer_key(c as u32),
            None => {
                return Err(Failure::Usage(format!(
                    "{}: no key '{leaf}' and no key '{FOOTER_ID}' for column '{leaf}'",
                    key_file.display()
                )))
            }
        };
        config.columns.push(entry);
    }
    footer_input
        .write_encrypted(&mut plain, &config)
        .map_err(|e| Failure::invalid(input.display(), e))?;
    Ok(plain)
}

fn crypt_failure(file: &Path, name: &str, e: CryptError) -> Failure {
    let at = format!(
        "{}: column {} '{name}', row group {}",
        file.display(),
        e.column,
        e.row_group.unwrap_or(0)
    );
    match e.kind {
        CryptErrorKind::NoKey | CryptErrorKind::KeyLength => Failure::Usage(format!(
            "{}: {e} (column '{name}'); add the key to the key file (ID=HEX)",
            file.display()
        )),
        CryptErrorKind::Authentication => Failure::invalid(
            format!("{at} (wrong key for the column, or the bytes were modified)"),
            Error::new(ErrorKind::ChecksumMismatch, e.offset),
        ),
        CryptErrorKind::Malformed(err) => Failure::invalid(at, err),
        _ => Failure::invalid(at, Error::new(ErrorKind::InvalidValue, e.offset)),
    }
}

fn bound(b: Option<lakecore::footer::Bound<'_>>) -> String {
    b.map_or_else(
        || "-".to_string(),
        |b| {
            let mut v = b.prefix.to_vec();
            v.extend_from_slice(b.suffix);
            format!("{}{}", hex(&v), if b.exact { "" } else { " (truncated)" })
        },
    )
}

/// `inspect`'s statistics-encryption section: the protected columns and, with keys, their
/// decrypted statistics per row group (text). Empty when the footer protects no column and
/// no key file was given.
pub fn inspect_encryption(
    file: &Path,
    f: &ModularFooter<'_>,
    key_file: Option<&Path>,
) -> Result<String, Failure> {
    let invalid = |e| Failure::invalid(file.display(), e);
    let keys = match key_file {
        Some(p) => Some(retriever(&read_key_file(p)?)),
        None => None,
    };
    let mut s = String::new();
    let Some(enc) = f.statistics_encryption().map_err(invalid)? else {
        if keys.is_some() {
            s.push_str("no encrypted columns");
        }
        return Ok(s);
    };
    let names = leaf_names(f).map_err(invalid)?;
    let _ = write!(s, "statistics encryption (module at byte {}):", enc.offset);
    for col in enc.columns() {
        let col = col.map_err(invalid)?;
        let name = names.get(col.column as usize).map_or("?", String::as_str);
        let key = col
            .key_metadata
            .or(enc.footer_key_metadata)
            .map_or_else(String::new, |m| String::from_utf8_lossy(m).into_owned());
        let _ = write!(
            s,
            "\n  column {} '{name}': encrypted, key '{key}'",
            col.column
        );
        let Some(keys) = &keys else { continue };
        for g in 0..f.num_row_groups() {
            let fail = |e| crypt_failure(file, name, e);
            let stats = f.decrypt_statistics(col.column, g, keys).map_err(fail)?;
            let ci = f.decrypt_column_index(col.column, g, keys).map_err(fail)?;
            let _ = write!(s, "\n    row group {g}:");
            match stats {
                Some(d) => {
                    let st = d.statistics().map_err(invalid)?;
                    let count = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
                    let _ = write!(
                        s,
                        " nulls {} nans {} min {} max {}",
                        count(st.null_count),
                        count(st.nan_count),
                        bound(st.min),
                        bound(st.max)
                    );
                }
                None => s.push_str(" no statistics"),
            }
            if let Some(d) = ci {
                let ci = d.column_index().map_err(invalid)?;
                let _ = write!(s, "; column index of {} pages", ci.len());
            }
        }
    }
    Ok(s)
}
