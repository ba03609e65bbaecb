//! What a file's bytes look like, told from their magic numbers alone: so a tool can say "this
//! is a standard Parquet file" instead of only "bad magic" when it was given the wrong file.
//!
//! Looks at the first and last bytes only; it decides nothing about validity (a file sniffed
//! as a sidecar may still fail to parse as one).
//!
//! ```
//! use lakecore::sniff::{sniff, Format};
//! assert_eq!(sniff(b"PAR1....PAR1"), Format::StandardParquet);
//! assert_eq!(sniff(b"Obj\x01..."), Format::Avro);
//! assert_eq!(sniff(b"  {\"id\": 1}"), Format::Json);
//! ```

use crate::blob::{FOOTER_LEN, FORMAT_VERSION, RECORD_MAGIC};

/// A format told from magic numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// `PAR1` at both ends: a Parquet file with the standard Thrift footer.
    StandardParquet,
    /// `PAR1` at the start, `PARM` at the end: a Parquet file with a modular footer.
    ModularParquet,
    /// `Obj\x01` at the start: an Avro object container (a Paimon manifest or manifest list).
    Avro,
    /// `PMSC` at the start: a Paimon manifest sidecar.
    Sidecar,
    /// A BLOB record magic at the start (or nothing but a 5-byte footer) and the format
    /// version as the last byte: a Paimon BLOB file.
    Blob,
    /// `{` as the first non-whitespace byte: a JSON object (a snapshot, schema or tag).
    Json,
    /// No bytes at all.
    Empty,
    /// None of the above.
    Unknown,
}

impl Format {
    /// What the format is, in words (`"a standard Parquet file"`).
    pub fn description(self) -> &'static str {
        match self {
            Format::StandardParquet => "a standard Parquet file (Thrift footer)",
            Format::ModularParquet => "a Parquet file with a modular footer",
            Format::Avro => "an Avro container (a Paimon manifest or manifest list)",
            Format::Sidecar => "a Paimon manifest sidecar",
            Format::Blob => "a Paimon BLOB file",
            Format::Json => "JSON (a Paimon snapshot, schema or tag?)",
            Format::Empty => "an empty file",
            Format::Unknown => "no format lakecore knows",
        }
    }
}

/// Tells the format of a whole file from its first and last bytes.
pub fn sniff(bytes: &[u8]) -> Format {
    let head = |magic: &[u8]| bytes.starts_with(magic);
    if bytes.is_empty() {
        return Format::Empty;
    }
    if bytes.len() >= 8 && head(b"PAR1") {
        if bytes.ends_with(b"PAR1") {
            return Format::StandardParquet;
        }
        if bytes.ends_with(b"PARM") {
            return Format::ModularParquet;
        }
    }
    if head(b"Obj\x01") {
        return Format::Avro;
    }
    if head(b"PMSC") {
        return Format::Sidecar;
    }
    let blob_version = bytes.last() == Some(&FORMAT_VERSION);
    if blob_version && (head(&RECORD_MAGIC) || bytes.len() == FOOTER_LEN) {
        return Format::Blob;
    }
    if bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
    {
        return Format::Json;
    }
    Format::Unknown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format() {
        assert_eq!(sniff(b""), Format::Empty);
        assert_eq!(sniff(b"PAR1xxxxPAR1"), Format::StandardParquet);
        assert_eq!(sniff(b"PAR1xxxxPARM"), Format::ModularParquet);
        assert_eq!(sniff(b"PAR1"), Format::Unknown);
        assert_eq!(sniff(b"Obj\x01rest"), Format::Avro);
        assert_eq!(sniff(b"PMSC\x01rest"), Format::Sidecar);
        assert_eq!(sniff(&[0xcf, 0x11, 0x4e, 0x58, 0, 0, 1]), Format::Blob);
        assert_eq!(sniff(&[0, 0, 0, 0, 1]), Format::Blob);
        assert_eq!(sniff(b"\n {}"), Format::Json);
        assert_eq!(sniff(b"hello"), Format::Unknown);
    }
}
