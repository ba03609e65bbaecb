//! Per-column statistics encryption (feature `encryption`): the STATISTICS_ENCRYPTION module,
//! AES-GCM modules framed and bound to their place the way Parquet modular encryption does
//! it, the [`KeyRetriever`] trait, the writer ([`FooterInput::write_encrypted`](crate::footer::FooterInput::write_encrypted), with `std`)
//! and the reader ([`ModularFooter::decrypt_statistics`],
//! [`ModularFooter::decrypt_column_index`]).
//!
//! Layout (`docs/FORMATS.md`, "Statistics encryption"): placement, offset indexes and the
//! statistics of unprotected columns stay plaintext and are read as before, zero-copy and
//! without keys. A protected column's chunks are absent from ROW_GROUP_STATS and have no
//! plaintext COLUMN_INDEX slice (an empty FIRST_PAGE slice); instead each chunk has up to two
//! encrypted modules, its row-group statistics pages and its column index as a page group of
//! COLUMN_CHUNK-scope pages (the chunk's arrays over its own pages). Each module is
//! `length (u32 LE) ‖ nonce (12) ‖ ciphertext ‖ tag (16)`, with Parquet's module AAD
//! `file_aad ‖ module type ‖ row group (i16 LE) ‖ column (i16 LE)` (type 1, ColumnMetaData,
//! for statistics; 6, ColumnIndex, for the column index).
//!
//! This module owns only the encryption layer: it finds its module in the root, decrypts,
//! and reads the decrypted pages with the profile's own page parser and statistic rules
//! (`stats`, `page`). It never changes how plaintext modules are read, and the plaintext
//! path does not depend on it. A reader without keys sees protected chunks as chunks
//! without statistics, and [`StatisticsEncryption::encrypted_column`] tells it why.
//!
//! ```
//! # #[cfg(feature = "std")] {
//! use lakecore::footer::{
//!     ChunkMeta, ColumnEncryption, EncryptionConfig, FooterInput, MinMax, ModularFooter,
//!     StaticKeys, StatsInput,
//! };
//! let mut input = FooterInput::flat(&["id", "secret"], &[2, 2], &[10]);
//! for (k, chunk) in input.chunks.iter_mut().enumerate() {
//!     *chunk = ChunkMeta { data_page_offset: 4 + 45 * k as u64, total_compressed_size: 45,
//!         total_uncompressed_size: 45, num_values: 10,
//!         statistics: Some(StatsInput { null_count: Some(0), nan_count: None,
//!             min_max: Some(MinMax { min: vec![1], max: vec![9], min_exact: true,
//!                 max_exact: true }) }),
//!         ..ChunkMeta::default() };
//! }
//! let config = EncryptionConfig {
//!     columns: vec![ColumnEncryption::with_key(1, vec![7; 16], b"key-1".to_vec())],
//!     ..EncryptionConfig::default()
//! };
//! let mut file = b"PAR1".to_vec();
//! file.resize(94, 0); // the data pages
//! input.write_encrypted(&mut file, &config)?;
//!
//! let footer = ModularFooter::parse(&file)?;
//! // Without a key: placement of every column, statistics of the plaintext one.
//! assert_eq!(footer.chunk_placement(1, 0)?.num_values, 10);
//! assert_eq!(footer.chunk_statistics(0, 0)?.unwrap().null_count, Some(0));
//! assert_eq!(footer.chunk_statistics(1, 0)?.unwrap().min, None);
//! // With the key: the protected column's statistics.
//! let keys = StaticKeys::new().with(b"key-1", &[7; 16]);
//! let decrypted = footer.decrypt_statistics(1, 0, &keys).unwrap().unwrap();
//! assert!(decrypted.statistics()?.min.unwrap().eq_bytes(&[1]));
//! // A wrong key is an error naming the column, never garbage.
//! let wrong = StaticKeys::new().with(b"key-1", &[8; 16]);
//! assert_eq!(footer.decrypt_statistics(1, 0, &wrong).unwrap_err().column, 1);
//! # }
//! # Ok::<(), lakecore::Error>(())
//! ```

use super::page::{ArrayPage, MetadataPageHeader};
use super::page_index::ColumnIndex;
use super::stats::{StatArrays, Statistics};
use super::view::{Limits, ModularFooter};
use super::{value_type_of, ArrayEncoding, MetadataArray, Module, PageScope, TRAILER_LEN};
use crate::codec::thrift::{FieldType, Reader};
use crate::error::{off, Error, ErrorKind, Result};
use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes128Gcm, Aes256Gcm, Nonce};
use alloc::vec::Vec;
use core::fmt;

/// The root directory's module value of STATISTICS_ENCRYPTION (THRIFT encoding). Outside
/// the profile's plaintext modules (0..=5), so readers without this feature skip it as an
/// unknown module.
pub const STATISTICS_ENCRYPTION_MODULE: i32 = 16;
/// Bytes of an AES-GCM nonce.
pub const NONCE_LEN: usize = 12;
/// Bytes of an AES-GCM tag.
pub const TAG_LEN: usize = 16;
/// Bytes of the length prefix of an encrypted module.
pub const LENGTH_LEN: usize = 4;
/// Largest row-group or column ordinal of an encrypted module (Parquet's AADs are i16).
pub const MAX_ORDINAL: u32 = i16::MAX as u32;

/// Parquet modular encryption's module types that this profile uses in module AADs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AadModule {
    /// The footer (AAD = file AAD ‖ 0, no ordinals).
    Footer = 0,
    /// ColumnMetaData: here a chunk's row-group statistics.
    ColumnMetaData = 1,
    /// A chunk's column index.
    ColumnIndex = 6,
    /// A chunk's offset index (not encrypted by this profile; for Parquet interoperability).
    OffsetIndex = 7,
}

/// Parquet's module AAD: `file_aad ‖ type`, plus `row_group (i16 LE) ‖ column (i16 LE)` for
/// every module but the footer. `None` when an ordinal exceeds [`MAX_ORDINAL`].
///
/// ```
/// use lakecore::footer::{module_aad, AadModule};
/// assert_eq!(module_aad(b"F", AadModule::ColumnIndex, 2, 258).unwrap(), b"F\x06\x02\x00\x02\x01");
/// assert_eq!(module_aad(b"F", AadModule::Footer, 9, 9).unwrap(), b"F\x00");
/// ```
pub fn module_aad(
    file_aad: &[u8],
    module: AadModule,
    row_group: u32,
    column: u32,
) -> Option<Vec<u8>> {
    let mut aad = Vec::with_capacity(file_aad.len() + 5);
    aad.extend_from_slice(file_aad);
    aad.push(module as u8);
    if module != AadModule::Footer {
        if row_group > MAX_ORDINAL || column > MAX_ORDINAL {
            return None;
        }
        aad.extend_from_slice(&(row_group as u16).to_le_bytes());
        aad.extend_from_slice(&(column as u16).to_le_bytes());
    }
    Some(aad)
}

// One per module, on the stack for the length of one call: not worth a box.
#[allow(clippy::large_enum_variant)]
enum Cipher {
    Aes128(Aes128Gcm),
    Aes256(Aes256Gcm),
}

impl Cipher {
    /// AES-128 or AES-256 by key length (16 or 32 bytes, the two Parquet readers accept).
    fn new(key: &[u8]) -> Option<Self> {
        match key.len() {
            16 => Aes128Gcm::new_from_slice(key).ok().map(Cipher::Aes128),
            32 => Aes256Gcm::new_from_slice(key).ok().map(Cipher::Aes256),
            _ => None,
        }
    }

    fn seal(&self, nonce: &[u8; NONCE_LEN], msg: &[u8], aad: &[u8]) -> Option<Vec<u8>> {
        let nonce = Nonce::from_slice(nonce);
        let payload = Payload { msg, aad };
        match self {
            Cipher::Aes128(c) => c.encrypt(nonce, payload).ok(),
            Cipher::Aes256(c) => c.encrypt(nonce, payload).ok(),
        }
    }

    fn open(&self, nonce: &[u8], msg: &[u8], aad: &[u8]) -> Option<Vec<u8>> {
        let nonce = Nonce::from_slice(nonce);
        let payload = Payload { msg, aad };
        match self {
            Cipher::Aes128(c) => c.decrypt(nonce, payload).ok(),
            Cipher::Aes256(c) => c.decrypt(nonce, payload).ok(),
        }
    }
}

/// Encrypts `plaintext` into a framed module `length ‖ nonce ‖ ciphertext ‖ tag` under `key`
/// (16 or 32 bytes) and `aad`. The nonce must never repeat under one key: the writer draws
/// each from the OS RNG. `None` for a key of another length or a module over 4 GiB.
pub fn encrypt_module(
    key: &[u8],
    aad: &[u8],
    nonce: &[u8; NONCE_LEN],
    plaintext: &[u8],
) -> Option<Vec<u8>> {
    let sealed = Cipher::new(key)?.seal(nonce, plaintext, aad)?;
    let len = u32::try_from(NONCE_LEN + sealed.len()).ok()?;
    let mut out = Vec::with_capacity(LENGTH_LEN + NONCE_LEN + sealed.len());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(nonce);
    out.extend_from_slice(&sealed);
    Some(out)
}

/// Why [`decrypt_module`] refused a module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModuleError {
    /// The key is neither 16 nor 32 bytes.
    KeyLength,
    /// The length prefix does not match the module's bytes, or is shorter than nonce + tag.
    Framing,
    /// The tag does not verify: a wrong key, a wrong AAD (module moved), or modified bytes.
    Authentication,
}

/// Decrypts a framed module (the inverse of [`encrypt_module`]): the length prefix must equal
/// the bytes that follow it exactly.
pub fn decrypt_module(
    key: &[u8],
    aad: &[u8],
    framed: &[u8],
) -> core::result::Result<Vec<u8>, ModuleError> {
    let cipher = Cipher::new(key).ok_or(ModuleError::KeyLength)?;
    let (len, rest) = framed
        .split_first_chunk::<LENGTH_LEN>()
        .ok_or(ModuleError::Framing)?;
    let len = u32::from_le_bytes(*len) as usize;
    if len != rest.len() || len < NONCE_LEN + TAG_LEN {
        return Err(ModuleError::Framing);
    }
    let (nonce, sealed) = rest.split_at(NONCE_LEN);
    cipher
        .open(nonce, sealed, aad)
        .ok_or(ModuleError::Authentication)
}

/// Supplies keys to the reader: the key (16 or 32 bytes) for the key metadata the file
/// stores, or `None` when the caller has none. Like the `parquet` crate's retriever, the key
/// metadata is opaque to this crate (a key id, a wrapped key, ...).
pub trait KeyRetriever {
    /// The key for `key_metadata`, or `None`.
    fn retrieve_key(&self, key_metadata: &[u8]) -> Option<Vec<u8>>;
}

/// A fixed list of (key metadata, key) pairs: the simplest [`KeyRetriever`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StaticKeys {
    keys: Vec<(Vec<u8>, Vec<u8>)>,
}

impl StaticKeys {
    /// No keys.
    pub fn new() -> Self {
        StaticKeys::default()
    }

    /// Adds the key for `key_metadata` (the last one added wins).
    pub fn with(mut self, key_metadata: &[u8], key: &[u8]) -> Self {
        self.keys.insert(0, (key_metadata.to_vec(), key.to_vec()));
        self
    }
}

impl KeyRetriever for StaticKeys {
    fn retrieve_key(&self, key_metadata: &[u8]) -> Option<Vec<u8>> {
        self.keys
            .iter()
            .find(|(m, _)| m == key_metadata)
            .map(|(_, k)| k.clone())
    }
}

/// What went wrong decrypting a protected column's module.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CryptErrorKind {
    /// The retriever has no key for the column's key metadata.
    NoKey,
    /// The retrieved key is neither 16 nor 32 bytes.
    KeyLength,
    /// The tag does not verify: a wrong key, or bytes modified or moved.
    Authentication,
    /// The module's framing, the encryption module, or the decrypted pages are malformed.
    Malformed(Error),
}

/// An error of the decrypting reader: it names the column (and row group) it was reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CryptError {
    /// The column (leaf ordinal).
    pub column: u32,
    /// The row group, when the error concerns one chunk.
    pub row_group: Option<u32>,
    /// The module read: statistics ([`AadModule::ColumnMetaData`]) or column index.
    pub module: AadModule,
    /// Absolute offset of the encrypted module (or of the field at fault).
    pub offset: u64,
    /// What went wrong.
    pub kind: CryptErrorKind,
}

impl fmt::Display for CryptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.module {
            AadModule::ColumnIndex => "column index",
            _ => "statistics",
        };
        write!(f, "column {}", self.column)?;
        if let Some(g) = self.row_group {
            write!(f, ", row group {g}")?;
        }
        write!(f, ": encrypted {what} at byte {}: ", self.offset)?;
        match self.kind {
            CryptErrorKind::NoKey => {
                f.write_str("no key for this column's key metadata: supply it to the retriever")
            }
            CryptErrorKind::KeyLength => f.write_str("the key is not 16 or 32 bytes"),
            CryptErrorKind::Authentication => f.write_str(
                "authentication failed: wrong key for this column, or the bytes were modified",
            ),
            CryptErrorKind::Malformed(e) => write!(f, "malformed: {e}"),
        }
    }
}

impl core::error::Error for CryptError {}

/// The STATISTICS_ENCRYPTION module, borrowed from the file (no allocation to read it).
///
/// ```text
/// struct StatisticsEncryption {
///   1: required binary aad_file_unique
///   2: optional binary aad_prefix            // file AAD = aad_prefix ‖ aad_file_unique
///   3: optional binary footer_key_metadata   // the key of columns without their own
///   4: required list<EncryptedColumn> columns   // ascending, unique column ordinals
/// }
/// struct EncryptedColumn {
///   1: required i32 column_ordinal
///   2: optional binary key_metadata          // absent: the footer key
///   3: required list<i64> statistics         // G + 1 absolute offsets, nondecreasing
///   4: required list<i64> column_index       // G + 1 absolute offsets, nondecreasing
/// }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct StatisticsEncryption<'a> {
    /// The file-unique part of the file AAD.
    pub aad_file_unique: &'a [u8],
    /// The AAD prefix, when stored.
    pub aad_prefix: Option<&'a [u8]>,
    /// Key metadata of the footer key.
    pub footer_key_metadata: Option<&'a [u8]>,
    /// Absolute offset of the module.
    pub offset: u64,
    columns: &'a [u8],
    columns_at: u64,
    num_row_groups: u32,
    max_depth: u32,
}

/// One protected column of [`StatisticsEncryption`].
#[derive(Clone, Copy, Debug)]
pub struct EncryptedColumn<'a> {
    /// The column (leaf ordinal).
    pub column: u32,
    /// Its key metadata (`None`: the footer key's).
    pub key_metadata: Option<&'a [u8]>,
    statistics: (&'a [u8], u64),
    column_index: (&'a [u8], u64),
    num_row_groups: u32,
}

impl<'a> StatisticsEncryption<'a> {
    /// The file AAD: `aad_prefix ‖ aad_file_unique`.
    pub fn file_aad(&self) -> Vec<u8> {
        let mut aad = self.aad_prefix.unwrap_or_default().to_vec();
        aad.extend_from_slice(self.aad_file_unique);
        aad
    }

    /// The protected columns, in column order (each entry parsed and checked as it comes;
    /// the first error ends the walk).
    pub fn columns(&self) -> impl Iterator<Item = Result<EncryptedColumn<'a>>> + '_ {
        let bytes = self.columns;
        let mut r = Reader::new(bytes, self.columns_at).with_max_depth(self.max_depth);
        let mut state: core::result::Result<u32, Error> = match r.list_header() {
            Ok(h) if h.elem == FieldType::Struct => Ok(h.len),
            Ok(h) => Err(Error::new(ErrorKind::ThriftWireType, h.offset)),
            Err(e) => Err(e),
        };
        let mut prev: Option<u32> = None;
        let g = self.num_row_groups;
        core::iter::from_fn(move || match state {
            Err(e) => {
                state = Ok(0);
                Some(Err(e))
            }
            Ok(0) => None,
            Ok(n) => {
                let at = r.position();
                let item = parse_column(&mut r, bytes, g).and_then(|c| {
                    if prev.is_some_and(|p| p >= c.column) {
                        return Err(Error::new(ErrorKind::NotSorted, at));
                    }
                    prev = Some(c.column);
                    Ok(c)
                });
                state = Ok(if item.is_ok() { n - 1 } else { 0 });
                Some(item)
            }
        })
    }

    /// The protected column `column`, or `None` when it is stored in plaintext.
    pub fn encrypted_column(&self, column: u32) -> Result<Option<EncryptedColumn<'a>>> {
        for c in self.columns() {
            let c = c?;
            if c.column == column {
                return Ok(Some(c));
            }
            if c.column > column {
                break;
            }
        }
        Ok(None)
    }
}

fn parse_column<'a>(r: &mut Reader<'a>, bytes: &'a [u8], g: u32) -> Result<EncryptedColumn<'a>> {
    let mut st = r.enter_struct()?;
    let (mut column, mut key, mut stats, mut ci) = (None, None, None, None);
    while let Some(f) = r.next_field(&mut st)? {
        match f.id {
            1 => {
                let v = r.field_i32(f)?;
                column = Some(
                    u32::try_from(v).map_err(|_| Error::new(ErrorKind::InvalidValue, f.offset))?,
                );
            }
            2 => key = Some(r.field_binary(f)?),
            3 | 4 => {
                let h = r.field_list(f, FieldType::I64)?;
                if h.len != g.saturating_add(1) || g == u32::MAX {
                    return Err(Error::new(ErrorKind::Mismatch, h.offset));
                }
                let start = r.index();
                let at = r.position();
                for _ in 0..h.len {
                    r.i64()?;
                }
                let bytes = (start, r.index(), at);
                if f.id == 3 {
                    stats = Some(bytes);
                } else {
                    ci = Some(bytes);
                }
            }
            _ => r.skip_field(f)?,
        }
    }
    let missing = Error::new(ErrorKind::ThriftMissingField, st.start());
    let column = column.ok_or(missing)?;
    let (stats, ci) = (stats.ok_or(missing)?, ci.ok_or(missing)?);
    Ok(EncryptedColumn {
        column,
        key_metadata: key,
        statistics: (bytes.get(stats.0..stats.1).unwrap_or_default(), stats.2),
        column_index: (bytes.get(ci.0..ci.1).unwrap_or_default(), ci.2),
        num_row_groups: g,
    })
}

impl EncryptedColumn<'_> {
    /// The byte range `[start, end)` of row group `g`'s module (`start == end`: none).
    fn range(list: (&[u8], u64), g: u32) -> Result<(u64, u64)> {
        let mut r = Reader::new(list.0, list.1);
        let mut prev = 0u64;
        let mut read = |r: &mut Reader<'_>| -> Result<u64> {
            let at = r.position();
            let v = u64::try_from(r.i64()?).map_err(|_| Error::new(ErrorKind::InvalidValue, at))?;
            if v < prev {
                return Err(Error::new(ErrorKind::NotSorted, at));
            }
            prev = v;
            Ok(v)
        };
        let mut a = 0;
        for _ in 0..=g {
            a = read(&mut r)?;
        }
        let b = read(&mut r)?;
        Ok((a, b))
    }

    /// Byte range of row group `g`'s encrypted statistics module.
    pub fn statistics_range(&self, g: u32) -> Result<(u64, u64)> {
        self.check_rg(g)?;
        Self::range(self.statistics, g)
    }

    /// Byte range of row group `g`'s encrypted column-index module.
    pub fn column_index_range(&self, g: u32) -> Result<(u64, u64)> {
        self.check_rg(g)?;
        Self::range(self.column_index, g)
    }

    fn check_rg(&self, g: u32) -> Result<()> {
        if g >= self.num_row_groups {
            return Err(Error::new(ErrorKind::OutOfBounds, self.statistics.1));
        }
        Ok(())
    }
}

/// A chunk's decrypted row-group statistics (owned bytes: pages of the ROW_GROUP_STATS
/// module in COLUMN_CHUNK scope, domain 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecryptedStatistics {
    plaintext: Vec<u8>,
    offset: u64,
    column: u32,
    row_group: u32,
    limits: Limits,
}

impl DecryptedStatistics {
    /// The statistics, borrowed from the decrypted bytes. Errors point at the encrypted
    /// module's offset.
    pub fn statistics(&self) -> Result<Statistics<'_>> {
        let mut stats = StatArrays::default();
        walk_plain(
            &self.plaintext,
            self.offset,
            Module::RowGroupStats,
            (self.column, self.row_group),
            &self.limits,
            |p| {
                if p.len() != 1 {
                    return Err(Error::new(ErrorKind::Mismatch, p.offset()));
                }
                match stats.slot_mut(p.header().array) {
                    Some(slot) => *slot = Some(p),
                    None => return Err(Error::new(ErrorKind::InvalidValue, p.offset())),
                }
                Ok(())
            },
        )?;
        stats.check_shape(self.offset)?;
        stats.validate()?;
        stats.at(0)
    }

    /// The decrypted bytes.
    pub fn plaintext(&self) -> &[u8] {
        &self.plaintext
    }
}

/// A chunk's decrypted column index (owned bytes: the chunk's COLUMN_INDEX page group).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecryptedColumnIndex {
    plaintext: Vec<u8>,
    offset: u64,
    column: u32,
    row_group: u32,
    limits: Limits,
}

impl DecryptedColumnIndex {
    /// The column index, borrowed from the decrypted bytes, checked by the rules of a
    /// plaintext group. Errors point at the encrypted module's offset.
    pub fn column_index(&self) -> Result<ColumnIndex<'_>> {
        let (mut bo, mut np, mut rep, mut def) = (None, None, None, None);
        let mut stats = StatArrays::default();
        walk_plain(
            &self.plaintext,
            self.offset,
            Module::ColumnIndex,
            (self.column, self.row_group),
            &self.limits,
            |p| {
                let a = p.header().array;
                match a {
                    MetadataArray::BoundaryOrder => bo = Some(p),
                    MetadataArray::NullPage => np = Some(p),
                    // Level histograms (converted files carry them): dense, checked below.
                    MetadataArray::RepetitionLevelHistogram => rep = Some(p),
                    MetadataArray::DefinitionLevelHistogram => def = Some(p),
                    _ => match stats.slot_mut(a) {
                        Some(slot) => *slot = Some(p),
                        None => return Err(Error::new(ErrorKind::InvalidValue, p.offset())),
                    },
                }
                Ok(())
            },
        )?;
        let missing = Error::new(ErrorKind::ThriftMissingField, self.offset);
        let (bo, np) = (bo.ok_or(missing)?, np.ok_or(missing)?);
        let dense = |p: &ArrayPage<'_>, n: usize| {
            if p.len() != n || p.is_sparse() {
                return Err(Error::new(ErrorKind::Mismatch, p.offset()));
            }
            Ok(())
        };
        dense(&bo, 1)?;
        dense(&np, np.len())?;
        for s in stats.all().into_iter().flatten() {
            if s.len() != np.len() {
                return Err(Error::new(ErrorKind::Mismatch, s.offset()));
            }
        }
        stats.check_shape(self.offset)?;
        stats.validate()?;
        if let Some(min) = &stats.min_value {
            for i in 0..np.len() {
                let null = np.get(i)?.unwrap_or(0) != 0;
                if min.slot(i)?.is_some() == null {
                    return Err(Error::new(ErrorKind::Mismatch, min.offset()));
                }
            }
        }
        let boundary_order = bo.get(0)?.unwrap_or(0);
        if boundary_order > 2 {
            return Err(Error::new(ErrorKind::InvalidValue, bo.offset()));
        }
        // The plaintext group's histogram rules (decrypted pages are not validated on the
        // walk, so each is validated here).
        for h in [&rep, &def].into_iter().flatten() {
            h.validate()?;
        }
        super::page_index::check_level_histograms([&rep, &def], &np)?;
        Ok(ColumnIndex {
            boundary_order: boundary_order as u8,
            null_pages: np,
            stats,
            repetition_level_histograms: rep,
            definition_level_histograms: def,
        })
    }

    /// The decrypted bytes.
    pub fn plaintext(&self) -> &[u8] {
        &self.plaintext
    }
}

/// Walks decrypted pages: each header checked against the limits, `module`, COLUMN_CHUNK
/// scope and the chunk's ordinals, arrays strictly ascending, pages ending exactly at the
/// end. Every page's offset is `origin` (the encrypted module's): plaintext has no place in
/// the file.
fn walk_plain<'p>(
    bytes: &'p [u8],
    origin: u64,
    module: Module,
    (col, rg): (u32, u32),
    limits: &Limits,
    mut each: impl FnMut(ArrayPage<'p>) -> Result<()>,
) -> Result<()> {
    let mut pos = 0usize;
    let mut last: Option<MetadataArray> = None;
    let mut count = 0u32;
    while pos < bytes.len() {
        count += 1;
        if count > limits.max_pages {
            return Err(Error::new(ErrorKind::LimitExceeded, origin));
        }
        let rest = bytes.get(pos..).unwrap_or_default();
        let h = MetadataPageHeader::parse(rest, origin)?;
        if h.num_values > limits.max_num_values || h.payload_length > limits.max_payload_bytes {
            return Err(Error::new(ErrorKind::LimitExceeded, origin));
        }
        let total = h.header_len as usize + h.payload_length as usize;
        let page_bytes = rest
            .get(..total)
            .ok_or(Error::new(ErrorKind::OutOfBounds, origin))?;
        if h.module != module
            || h.scope != PageScope::ColumnChunk
            || h.column_ordinal != Some(col)
            || h.row_group_ordinal != Some(rg)
            || h.value_type != value_type_of(h.array)
        {
            return Err(Error::new(ErrorKind::Mismatch, origin));
        }
        if let Some(prev) = last {
            if h.array <= prev {
                let kind = if h.array == prev {
                    ErrorKind::Duplicate
                } else {
                    ErrorKind::NotSorted
                };
                return Err(Error::new(kind, origin));
            }
        }
        last = Some(h.array);
        let page = ArrayPage::with_header(h, page_bytes, origin)?;
        if matches!(
            h.array,
            MetadataArray::NullPage | MetadataArray::BoundaryOrder
        ) && h.encoding != ArrayEncoding::BitPacked
        {
            return Err(Error::new(ErrorKind::Mismatch, origin));
        }
        page.validate()?;
        each(page)?;
        pos += total;
    }
    Ok(())
}

impl<'a> ModularFooter<'a> {
    /// The STATISTICS_ENCRYPTION module, or `None` for a footer without protected columns.
    /// Reads the root's module list and the module in place (no allocation).
    pub fn statistics_encryption(&self) -> Result<Option<StatisticsEncryption<'a>>> {
        let trailer_at = self.file_len.saturating_sub(off(TRAILER_LEN));
        let root = self.slice(
            self.root_offset,
            trailer_at.saturating_sub(self.root_offset),
        )?;
        let mut r = self.reader(root, self.root_offset);
        let mut st = r.enter_struct()?;
        let mut found = None;
        while let Some(f) = r.next_field(&mut st)? {
            if f.id != 6 {
                r.skip_field(f)?;
                continue;
            }
            let h = r.field_list(f, FieldType::Struct)?;
            for _ in 0..h.len {
                let mut ms = r.enter_struct()?;
                let (mut module, mut enc, mut offset, mut length) = (None, None, None, None);
                while let Some(mf) = r.next_field(&mut ms)? {
                    match mf.id {
                        1 => module = Some(r.field_i32(mf)?),
                        2 => enc = Some(r.field_i32(mf)?),
                        3 => offset = Some(r.field_i64(mf)?),
                        4 => length = Some(r.field_i64(mf)?),
                        _ => r.skip_field(mf)?,
                    }
                }
                if module != Some(STATISTICS_ENCRYPTION_MODULE) {
                    continue;
                }
                if found.is_some() {
                    return Err(Error::new(ErrorKind::Duplicate, ms.start()));
                }
                let bad = Error::new(ErrorKind::InvalidValue, ms.start());
                if enc != Some(0) {
                    return Err(bad);
                }
                let offset = offset.and_then(|v| u64::try_from(v).ok()).ok_or(bad)?;
                let length = length.and_then(|v| u64::try_from(v).ok()).ok_or(bad)?;
                found = Some((offset, length));
            }
        }
        let Some((offset, length)) = found else {
            return Ok(None);
        };
        self.check_location(offset, length, self.root_offset)?;
        let bytes = self.slice(offset, length)?;
        let mut r = self.reader(bytes, offset);
        let mut st = r.enter_struct()?;
        let (mut unique, mut prefix, mut fkm, mut columns) = (None, None, None, None);
        while let Some(f) = r.next_field(&mut st)? {
            match f.id {
                1 => unique = Some(r.field_binary(f)?),
                2 => prefix = Some(r.field_binary(f)?),
                3 => fkm = Some(r.field_binary(f)?),
                4 => {
                    if f.ty != FieldType::List {
                        return Err(Error::new(ErrorKind::ThriftWireType, f.offset));
                    }
                    let start = r.index();
                    let at = r.position();
                    r.skip(FieldType::List)?;
                    columns = Some((bytes.get(start..r.index()).unwrap_or_default(), at));
                }
                _ => r.skip_field(f)?,
            }
        }
        r.expect_end()?;
        let missing = Error::new(ErrorKind::ThriftMissingField, offset);
        let (columns, columns_at) = columns.ok_or(missing)?;
        Ok(Some(StatisticsEncryption {
            aad_file_unique: unique.ok_or(missing)?,
            aad_prefix: prefix,
            footer_key_metadata: fkm,
            offset,
            columns,
            columns_at,
            num_row_groups: self.num_row_groups,
            max_depth: self.limits.max_depth,
        }))
    }

    /// Decrypts the row-group statistics of chunk (column, row group): `Ok(None)` when the
    /// footer does not protect `column` or the chunk has no statistics. The key comes from
    /// `keys` for the column's key metadata (or the footer key's).
    pub fn decrypt_statistics(
        &self,
        column: u32,
        row_group: u32,
        keys: &dyn KeyRetriever,
    ) -> core::result::Result<Option<DecryptedStatistics>, CryptError> {
        let module = AadModule::ColumnMetaData;
        Ok(self
            .decrypt_chunk(column, row_group, keys, module)?
            .map(|(plaintext, offset)| DecryptedStatistics {
                plaintext,
                offset,
                column,
                row_group,
                limits: self.limits,
            }))
    }

    /// Decrypts the column index of chunk (column, row group), like
    /// [`decrypt_statistics`](Self::decrypt_statistics).
    pub fn decrypt_column_index(
        &self,
        column: u32,
        row_group: u32,
        keys: &dyn KeyRetriever,
    ) -> core::result::Result<Option<DecryptedColumnIndex>, CryptError> {
        let module = AadModule::ColumnIndex;
        Ok(self
            .decrypt_chunk(column, row_group, keys, module)?
            .map(|(plaintext, offset)| DecryptedColumnIndex {
                plaintext,
                offset,
                column,
                row_group,
                limits: self.limits,
            }))
    }

    fn decrypt_chunk(
        &self,
        column: u32,
        row_group: u32,
        keys: &dyn KeyRetriever,
        module: AadModule,
    ) -> core::result::Result<Option<(Vec<u8>, u64)>, CryptError> {
        let err = |offset: u64, kind: CryptErrorKind| CryptError {
            column,
            row_group: Some(row_group),
            module,
            offset,
            kind,
        };
        let malformed = |e: Error| err(e.offset, CryptErrorKind::Malformed(e));
        self.chunk_index(column, row_group).map_err(malformed)?;
        let Some(enc) = self.statistics_encryption().map_err(malformed)? else {
            return Ok(None);
        };
        let Some(col) = enc.encrypted_column(column).map_err(malformed)? else {
            return Ok(None);
        };
        self.decrypt_resolved(&enc, &col, row_group, keys, module)
    }

    /// Decrypts row group `row_group`'s statistics of a protected column already looked up
    /// (`enc` from [`statistics_encryption`](Self::statistics_encryption), `col` from its
    /// [`encrypted_column`](StatisticsEncryption::encrypted_column)): the lookup is done once
    /// per column instead of once per chunk, as in
    /// [`decrypt_statistics`](Self::decrypt_statistics).
    pub fn decrypt_column_statistics(
        &self,
        enc: &StatisticsEncryption<'a>,
        col: &EncryptedColumn<'a>,
        row_group: u32,
        keys: &dyn KeyRetriever,
    ) -> core::result::Result<Option<DecryptedStatistics>, CryptError> {
        let (column, module) = (col.column, AadModule::ColumnMetaData);
        Ok(self
            .decrypt_resolved(enc, col, row_group, keys, module)?
            .map(|(plaintext, offset)| DecryptedStatistics {
                plaintext,
                offset,
                column,
                row_group,
                limits: self.limits,
            }))
    }

    fn decrypt_resolved(
        &self,
        enc: &StatisticsEncryption<'a>,
        col: &EncryptedColumn<'a>,
        row_group: u32,
        keys: &dyn KeyRetriever,
        module: AadModule,
    ) -> core::result::Result<Option<(Vec<u8>, u64)>, CryptError> {
        let column = col.column;
        let err = |offset: u64, kind: CryptErrorKind| CryptError {
            column,
            row_group: Some(row_group),
            module,
            offset,
            kind,
        };
        let malformed = |e: Error| err(e.offset, CryptErrorKind::Malformed(e));
        self.chunk_index(column, row_group).map_err(malformed)?;
        let (a, b) = match module {
            AadModule::ColumnIndex => col.column_index_range(row_group),
            _ => col.statistics_range(row_group),
        }
        .map_err(malformed)?;
        if a == b {
            return Ok(None);
        }
        self.check_location(a, b - a, enc.offset)
            .map_err(malformed)?;
        let framed = self.slice(a, b - a).map_err(malformed)?;
        let key_metadata = col
            .key_metadata
            .or(enc.footer_key_metadata)
            .unwrap_or_default();
        let key = keys
            .retrieve_key(key_metadata)
            .ok_or(err(a, CryptErrorKind::NoKey))?;
        let aad = module_aad(&enc.file_aad(), module, row_group, column)
            .ok_or(malformed(Error::new(ErrorKind::LimitExceeded, a)))?;
        match decrypt_module(&key, &aad, framed) {
            Ok(plain) => Ok(Some((plain, a))),
            Err(ModuleError::KeyLength) => Err(err(a, CryptErrorKind::KeyLength)),
            Err(ModuleError::Authentication) => Err(err(a, CryptErrorKind::Authentication)),
            Err(ModuleError::Framing) => Err(malformed(Error::new(ErrorKind::InvalidLength, a))),
        }
    }
}

/// A protected column and its key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ColumnEncryption {
    /// The column (leaf ordinal).
    pub column: u32,
    /// Its own key (16 or 32 bytes); `None`: the footer key.
    pub key: Option<Vec<u8>>,
    /// The key metadata stored for its own key (ignored with the footer key).
    pub key_metadata: Vec<u8>,
}

impl ColumnEncryption {
    /// `column` under its own `key`, stored with `key_metadata`.
    pub fn with_key(column: u32, key: Vec<u8>, key_metadata: Vec<u8>) -> Self {
        ColumnEncryption {
            column,
            key: Some(key),
            key_metadata,
        }
    }

    /// `column` under the footer key.
    pub fn with_footer_key(column: u32) -> Self {
        ColumnEncryption {
            column,
            ..ColumnEncryption::default()
        }
    }
}

/// Which columns [`FooterInput::write_encrypted`](crate::footer::FooterInput::write_encrypted) protects, and with which keys.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EncryptionConfig {
    /// The footer key: the key of protected columns without their own (16 or 32 bytes).
    pub footer_key: Option<Vec<u8>>,
    /// Key metadata stored for the footer key.
    pub footer_key_metadata: Option<Vec<u8>>,
    /// An AAD prefix (e.g. the table and file name), stored in the module.
    pub aad_prefix: Option<Vec<u8>>,
    /// The protected columns (any order, each once).
    pub columns: Vec<ColumnEncryption>,
}

#[cfg(feature = "std")]
mod write {
    use super::super::writer::{column_index_group, stat_pages, ChunkMeta, FooterInput};
    use super::super::{Module, ModuleEncoding, MAGIC};
    use super::{
        encrypt_module, module_aad, AadModule, EncryptionConfig, ModularFooter, MAX_ORDINAL,
        NONCE_LEN, STATISTICS_ENCRYPTION_MODULE,
    };
    use crate::codec::thrift::{FieldType, Writer};
    use crate::error::{off, Error, ErrorKind, Location, Result};
    use aes_gcm::aead::rand_core::RngCore;
    use aes_gcm::aead::OsRng;
    use alloc::vec::Vec;

    /// Bytes of the file-unique AAD part the writer draws (Parquet's writers use 8).
    const AAD_FILE_UNIQUE_LEN: usize = 8;

    fn whole(kind: ErrorKind) -> Error {
        Error::at_item(kind, Location::Whole, 0)
    }

    fn column_err(kind: ErrorKind, column: u32) -> Error {
        Error::at_item(kind, Location::Entry, u64::from(column))
    }

    /// The plaintext of a chunk's encrypted statistics: its ROW_GROUP_STATS pages over one
    /// position, COLUMN_CHUNK scope.
    fn statistics_plaintext(chunk: &ChunkMeta, ords: (u32, u32)) -> Result<Vec<u8>> {
        let mut plain = Vec::new();
        if let Some(s) = &chunk.statistics {
            for (_, page) in stat_pages(Module::RowGroupStats, &[Some(s)], Some(ords))? {
                plain.extend_from_slice(&page);
            }
        }
        Ok(plain)
    }

    /// The plaintext of a chunk's encrypted column index: the page group a plaintext
    /// COLUMN_INDEX module would hold for it.
    fn column_index_plaintext(chunk: &ChunkMeta, ords: (u32, u32), k: usize) -> Result<Vec<u8>> {
        let mut plain = Vec::new();
        let Some(ci) = &chunk.column_index else {
            return Ok(plain);
        };
        // The group the plaintext writer would write, level histograms included.
        for (_, page) in column_index_group(ci, Some(ords), k)? {
            plain.extend_from_slice(&page);
        }
        Ok(plain)
    }

    impl FooterInput {
        /// Appends the modular footer like [`write`](Self::write), with the statistics and
        /// column indexes of `config.columns` encrypted per chunk (AES-GCM, nonces and the
        /// file-unique AAD from the OS RNG) in a STATISTICS_ENCRYPTION module; placement,
        /// offset indexes and the other columns stay plaintext.
        ///
        /// Errors, besides [`write`](Self::write)'s, name the column ([`Location::Entry`]):
        /// [`ErrorKind::OutOfBounds`] for a column `>= num_columns`,
        /// [`ErrorKind::Duplicate`] for a column listed twice, [`ErrorKind::InvalidLength`]
        /// for a key not 16 or 32 bytes, [`ErrorKind::ThriftMissingField`] for a column on
        /// the footer key without one; [`ErrorKind::LimitExceeded`] ([`Location::Whole`]) for
        /// more than 32,768 row groups, or a protected column past ordinal 32,767 (Parquet's
        /// AADs hold i16 ordinals).
        pub fn write_encrypted(&self, out: &mut Vec<u8>, config: &EncryptionConfig) -> Result<()> {
            let g = self.row_group_num_rows.len();
            let c = self.num_columns;
            let mut cols: Vec<_> = config.columns.iter().collect();
            cols.sort_by_key(|e| e.column);
            let mut keys = Vec::with_capacity(cols.len());
            for (i, e) in cols.iter().enumerate() {
                if e.column >= c {
                    return Err(column_err(ErrorKind::OutOfBounds, e.column));
                }
                if i > 0 && cols.get(i - 1).is_some_and(|p| p.column == e.column) {
                    return Err(column_err(ErrorKind::Duplicate, e.column));
                }
                if e.column > MAX_ORDINAL {
                    return Err(whole(ErrorKind::LimitExceeded));
                }
                let key = e
                    .key
                    .as_ref()
                    .or(config.footer_key.as_ref())
                    .ok_or(column_err(ErrorKind::ThriftMissingField, e.column))?;
                if key.len() != 16 && key.len() != 32 {
                    return Err(column_err(ErrorKind::InvalidLength, e.column));
                }
                keys.push(key);
            }
            if g > MAX_ORDINAL as usize + 1 && !cols.is_empty() {
                return Err(whole(ErrorKind::LimitExceeded));
            }
            if self.chunks.len() != (c as usize).saturating_mul(g) {
                return Err(whole(ErrorKind::Mismatch));
            }
            let mut masked = self.clone();
            for e in &cols {
                let at = e.column as usize * g;
                for chunk in masked.chunks.iter_mut().skip(at).take(g) {
                    chunk.statistics = None;
                    chunk.column_index = None;
                }
            }
            let base = out.len();
            masked.write(out)?;
            // The directory the plaintext footer got; its root is rewritten below.
            let (root_offset, modules) = {
                let footer = ModularFooter::parse(out).map_err(|_| whole(ErrorKind::Mismatch))?;
                let modules: Vec<_> = footer.modules().collect();
                (footer.root_offset(), modules)
            };
            let root_at =
                usize::try_from(root_offset).map_err(|_| whole(ErrorKind::LimitExceeded))?;
            if root_at < base {
                return Err(whole(ErrorKind::Mismatch));
            }
            out.truncate(root_at);

            let mut unique = [0u8; AAD_FILE_UNIQUE_LEN];
            OsRng.fill_bytes(&mut unique);
            let mut file_aad = config.aad_prefix.clone().unwrap_or_default();
            file_aad.extend_from_slice(&unique);
            let seal = |out: &mut Vec<u8>, key: &[u8], aad: &[u8], plain: &[u8]| -> Result<()> {
                let mut nonce = [0u8; NONCE_LEN];
                OsRng.fill_bytes(&mut nonce);
                let framed = encrypt_module(key, aad, &nonce, plain)
                    .ok_or(whole(ErrorKind::LimitExceeded))?;
                out.extend_from_slice(&framed);
                Ok(())
            };
            let mut entries = Vec::with_capacity(cols.len());
            for (e, key) in cols.iter().zip(&keys) {
                let mut lists = Vec::with_capacity(2);
                for module in [AadModule::ColumnMetaData, AadModule::ColumnIndex] {
                    let mut list = Vec::with_capacity(g + 1);
                    for rg in 0..g {
                        let k = e.column as usize * g + rg;
                        list.push(off(out.len()));
                        let chunk = self.chunks.get(k).ok_or(whole(ErrorKind::Mismatch))?;
                        let ords = (e.column, rg as u32);
                        let plain = if module == AadModule::ColumnIndex {
                            column_index_plaintext(chunk, ords, k)?
                        } else {
                            statistics_plaintext(chunk, ords)?
                        };
                        if plain.is_empty() {
                            continue;
                        }
                        let aad = module_aad(&file_aad, module, rg as u32, e.column)
                            .ok_or(whole(ErrorKind::LimitExceeded))?;
                        seal(out, key, &aad, &plain)?;
                    }
                    list.push(off(out.len()));
                    lists.push(list);
                }
                entries.push((e, lists));
            }

            let i64_of = |v: u64| i64::try_from(v).map_err(|_| whole(ErrorKind::LimitExceeded));
            let module_at = off(out.len());
            let mut w = Writer::new();
            w.struct_begin();
            w.field_binary(1, &unique);
            if let Some(p) = &config.aad_prefix {
                w.field_binary(2, p);
            }
            if let Some(m) = &config.footer_key_metadata {
                w.field_binary(3, m);
            }
            w.field_list(4, FieldType::Struct, entries.len());
            for (e, offsets) in &entries {
                w.struct_begin();
                w.field_i32(1, e.column as i32);
                if e.key.is_some() {
                    w.field_binary(2, &e.key_metadata);
                }
                for (id, list) in (3..).zip(offsets) {
                    w.field_list(id, FieldType::I64, list.len());
                    for &v in list {
                        w.i64(i64_of(v)?);
                    }
                }
                w.struct_end();
            }
            w.struct_end();
            out.extend_from_slice(w.as_bytes());
            let module_len = off(w.len());

            // The root: the plaintext footer's, with one more module.
            let mut rows: u64 = 0;
            for &r in &self.row_group_num_rows {
                rows = rows.checked_add(r).ok_or(whole(ErrorKind::LimitExceeded))?;
            }
            let mut w = Writer::new();
            w.struct_begin();
            w.field_i32(1, 1);
            w.field_i32(2, g as i32);
            w.field_i32(3, c as i32);
            w.field_i64(4, i64_of(rows)?);
            w.field_list(5, FieldType::I64, g);
            for &r in &self.row_group_num_rows {
                w.i64(i64_of(r)?);
            }
            w.field_list(6, FieldType::Struct, modules.len() + 1);
            let mine = (
                STATISTICS_ENCRYPTION_MODULE,
                ModuleEncoding::Thrift.value(),
                module_at,
                module_len,
            );
            let all = modules
                .iter()
                .map(|m| (m.module.value(), m.encoding.value(), m.offset, m.length))
                .chain(core::iter::once(mine));
            for (module, enc, offset, length) in all {
                w.struct_begin();
                w.field_i32(1, module);
                w.field_i32(2, enc);
                w.field_i64(3, i64_of(offset)?);
                w.field_i64(4, i64_of(length)?);
                w.struct_end();
            }
            w.struct_end();
            let root_len = u32::try_from(w.len()).map_err(|_| whole(ErrorKind::LimitExceeded))?;
            out.extend_from_slice(w.as_bytes());
            out.extend_from_slice(&root_len.to_le_bytes());
            out.extend_from_slice(&MAGIC);
            Ok(())
        }
    }
}
