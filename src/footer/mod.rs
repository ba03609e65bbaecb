//! Parquet modular footer with metadata (array) pages: the profile of
//! `docs/FORMATS.md`, section "Parquet modular footer".
//!
//! This module owns the footer's layout: the `PARM` trailer, the Compact-Thrift root, the
//! module directory, metadata page headers and their bit-packed payloads. It uses
//! [`crate::codec::thrift`] and [`crate::codec::bitpack`] and knows nothing about files or
//! I/O: callers hand it a byte window and the absolute offset of its first byte.
//!
//! Its files are private and every public item is re-exported here (`lakecore::footer::X`):
//!
//! - `page`: [`MetadataPageHeader`] and the payload view
//!   [`ArrayPage`] (dense O(1) `get`, sparse O(log n) lookup).
//! - `view`: [`ModularFooter`], structural validation on open (work independent of the
//!   column count), O(1) typed accessors, and [`ModularFooter::validate`] for the value-level
//!   rules over every array; `directory`: the root, module directory, descriptors and FILE
//!   page headers it parses on open; `stats`: [`StatArrays`] and [`Statistics`];
//!   `page_index`: [`OffsetIndex`], [`ColumnIndex`] and [`DictionaryPages`].
//! - `schema`: the THRIFT modules (schema elements, leaf paths, file metadata).
//! - `writer` (`alloc`): builds a complete modular footer ([`FooterInput`]); `convert`
//!   (feature `parquet`): from a standard Parquet file, read with the `parquet` crate.
//! - `crypt` (feature `encryption`): per-column statistics encryption (AES-GCM modules
//!   with Parquet's module AADs, located by the STATISTICS_ENCRYPTION module), the
//!   `KeyRetriever` trait, `FooterInput::write_encrypted` (with `std`) and
//!   `ModularFooter::decrypt_statistics` / `decrypt_column_index` (items of that feature,
//!   so named here without links).
//!
//! ```
//! # #[cfg(feature = "alloc")] {
//! use lakecore::footer::{ChunkMeta, FooterInput, ModularFooter};
//! let mut input = FooterInput::flat(&["id"], &[2], &[10]); // one INT64 column, one row group
//! input.chunks[0] = ChunkMeta { data_page_offset: 4, total_compressed_size: 90,
//!     total_uncompressed_size: 90, num_values: 10, ..ChunkMeta::default() };
//! let mut file = b"PAR1".to_vec();
//! file.resize(94, 0); // the data pages
//! input.write(&mut file).unwrap();
//! let footer = ModularFooter::parse(&file).unwrap();
//! assert_eq!(footer.chunk_placement(0, 0).unwrap().data_page_offset, 4);
//! # }
//! ```

mod directory;
mod extras;
mod page;
mod page_index;
mod schema;
mod stats;
mod view;

#[cfg(feature = "arrow")]
pub mod arrow;
#[cfg(feature = "parquet")]
mod convert;
#[cfg(feature = "encryption")]
mod crypt;
#[cfg(feature = "alloc")]
mod standard;
#[cfg(feature = "alloc")]
mod writer;

#[cfg(feature = "parquet")]
pub use convert::{convert, read_standard, standard_footer_range, synthetic_standard_file};
pub use directory::ModuleLocation;
pub use extras::{ChunkDetails, ChunkExtras, RowGroupInfo, RowGroups, SortingColumn};
pub use page::{ArrayPage, EncodingHeader, MetadataPageHeader};
pub use page_index::{
    ColumnIndex, ColumnIndexArrays, DictionaryPages, HistogramArrays, OffsetIndex,
    OffsetIndexArrays,
};
pub use schema::{FileMetadata, Leaf, Leaves, Schema, SchemaElement, MAX_SCHEMA_DEPTH};
#[cfg(feature = "alloc")]
pub use standard::to_standard;
pub use stats::{Bound, StatArrays, Statistics};
pub use view::{ChunkPlacement, FooterOptions, Limits, ModularFooter, PlacementArrays};
#[cfg(feature = "alloc")]
pub use writer::{
    encode_page, ChunkMeta, ColumnIndexInput, FooterInput, MinMax, PageLocationInput,
    PageStatsInput, StatsInput, Values,
};

#[cfg(feature = "encryption")]
pub use crypt::{
    decrypt_module, encrypt_module, module_aad, AadModule, ColumnEncryption, CryptError,
    CryptErrorKind, DecryptedColumnIndex, DecryptedStatistics, EncryptedColumn, EncryptionConfig,
    KeyRetriever, ModuleError, StaticKeys, StatisticsEncryption, LENGTH_LEN, MAX_ORDINAL,
    NONCE_LEN, STATISTICS_ENCRYPTION_MODULE, TAG_LEN,
};

/// The trailer magic of a file with a modular footer.
pub const MAGIC: [u8; 4] = *b"PARM";
/// The leading magic of every Parquet file.
pub const LEADING_MAGIC: [u8; 4] = *b"PAR1";
/// Trailer size: root length (u32 LE) + magic.
pub const TRAILER_LEN: usize = 8;

macro_rules! thrift_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $value:expr,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum $name {
            $($(#[$vdoc])* $variant = $value,)*
        }

        impl $name {
            /// The enum from its Thrift value, or `None` for a value this profile does not know.
            pub const fn from_i32(v: i32) -> Option<Self> {
                match v {
                    $($value => Some($name::$variant),)*
                    _ => None,
                }
            }

            /// The Thrift value.
            pub const fn value(self) -> i32 {
                self as i32
            }
        }
    };
}

thrift_enum! {
    /// A metadata module.
    Module {
        /// The schema (THRIFT).
        Schema = 0,
        /// Chunk placement arrays (ARRAY_PAGES, required).
        Placement = 1,
        /// Row-group statistics (ARRAY_PAGES, optional).
        RowGroupStats = 2,
        /// Offset index (ARRAY_PAGES, optional).
        OffsetIndex = 3,
        /// Column index (ARRAY_PAGES, optional).
        ColumnIndex = 4,
        /// Created-by, key/value metadata and the format version (THRIFT, optional).
        FileMetadata = 5,
        /// The row groups' own fields (`parquet.RowGroup` without its columns: total byte
        /// size, sorting columns, file offset, total compressed size, ordinal; THRIFT,
        /// optional).
        RowGroups = 6,
    }
}

impl Module {
    /// The module's name as the profile writes it (`SCHEMA`, `PLACEMENT`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Module::Schema => "SCHEMA",
            Module::Placement => "PLACEMENT",
            Module::RowGroupStats => "ROW_GROUP_STATS",
            Module::OffsetIndex => "OFFSET_INDEX",
            Module::ColumnIndex => "COLUMN_INDEX",
            Module::FileMetadata => "FILE_METADATA",
            Module::RowGroups => "ROW_GROUPS",
        }
    }

    /// The encoding this profile requires for the module.
    pub const fn required_encoding(self) -> ModuleEncoding {
        match self {
            Module::Schema | Module::FileMetadata | Module::RowGroups => ModuleEncoding::Thrift,
            _ => ModuleEncoding::ArrayPages,
        }
    }
}

thrift_enum! {
    /// How a module is stored.
    ModuleEncoding {
        /// One Compact-Thrift struct.
        Thrift = 0,
        /// A `MetadataModuleHeader` listing metadata pages.
        ArrayPages = 1,
    }
}

thrift_enum! {
    /// Which array a metadata page holds.
    MetadataArray {
        /// Absolute offset of the chunk's first data page.
        DataPageOffset = 0,
        /// CSR index into `DictionaryPageOffset` (K + 1 values).
        FirstDictionaryPage = 1,
        /// Absolute offsets of dictionary pages.
        DictionaryPageOffset = 2,
        /// Compressed chunk size.
        TotalCompressedSize = 3,
        /// Uncompressed chunk size.
        TotalUncompressedSize = 4,
        /// Number of values in the chunk.
        NumValues = 5,
        /// parquet.CompressionCodec.
        Codec = 6,
        /// parquet.Type of each column.
        PhysicalType = 7,
        /// Whether every data page is dictionary-encoded.
        IsFullyDictionaryEncoded = 8,
        /// The chunk's `encodings` as a bit set (bit e = parquet.Encoding e; optional).
        Encodings = 9,
        /// The chunk's raw Compact-Thrift `list<parquet.PageEncodingStats>` (optional).
        EncodingStats = 10,
        /// Absolute offset of the chunk's Bloom filter (optional).
        BloomFilterOffset = 11,
        /// Length of the chunk's Bloom filter (optional).
        BloomFilterLength = 12,
        /// `ColumnChunk.file_offset` where it is not 0 (optional).
        ChunkFileOffset = 13,
        /// The chunk's raw Compact-Thrift `parquet.SizeStatistics` struct (optional).
        SizeStatistics = 14,
        /// Per chunk, the position of its encoding-stats list in ENCODING_STATS, the table of
        /// distinct lists (optional, with ENCODING_STATS; SPARSE where a chunk has none).
        EncodingStatsIndex = 15,
        /// Null counts.
        NullCount = 20,
        /// Min values (suffixes after the common prefix).
        MinValue = 21,
        /// Max values (suffixes after the common prefix).
        MaxValue = 22,
        /// Whether the min is exact.
        MinIsExact = 23,
        /// Whether the max is exact.
        MaxIsExact = 24,
        /// NaN counts.
        NanCount = 25,
        /// Common prefix of min and max.
        MinMaxPrefix = 26,
        /// Distinct-value counts (ROW_GROUP_STATS only, optional).
        DistinctCount = 27,
        /// Page offsets (offset index).
        PageOffset = 40,
        /// Compressed page sizes (offset index).
        CompressedPageSize = 41,
        /// First row index of each page (offset index).
        FirstRowIndex = 42,
        /// Whether a page holds only nulls (column index).
        NullPage = 43,
        /// parquet.BoundaryOrder of a chunk (column index).
        BoundaryOrder = 44,
        // 45 (PAGE_GROUP_OFFSET, the per-chunk page groups of the draft) is retired: the
        // page indexes are FILE pages over the concatenated page space, sliced by FIRST_PAGE.
        /// Unencoded BYTE_ARRAY data bytes of each page (offset index, optional).
        UnencodedByteArrayDataBytes = 46,
        /// Repetition-level histograms of the pages, concatenated (column index, optional).
        RepetitionLevelHistogram = 47,
        /// Definition-level histograms of the pages, concatenated (column index, optional).
        DefinitionLevelHistogram = 48,
        /// CSR over chunks (K + 1 values, first 0, last = the module's page count P): chunk
        /// k's pages are positions `[f[k], f[k+1])` of the module's page arrays.
        FirstPage = 49,
        /// CSR over chunks (K + 1): chunk k's repetition-level histograms are positions
        /// `[f[k], f[k+1])` of REPETITION_LEVEL_HISTOGRAM (empty = none).
        FirstRepetitionLevelHistogram = 50,
        /// CSR over chunks (K + 1) into DEFINITION_LEVEL_HISTOGRAM.
        FirstDefinitionLevelHistogram = 51,
    }
}

thrift_enum! {
    /// The logical type of an array's values.
    ValueType {
        /// One bit per value.
        Boolean = 0,
        /// Unsigned 32-bit integers.
        Uint32 = 1,
        /// Unsigned 64-bit integers.
        Uint64 = 2,
        /// Byte strings (offsets + bytes).
        ByteArray = 3,
    }
}

thrift_enum! {
    /// How an array page's payload is laid out.
    ArrayEncoding {
        /// Dense: every position present.
        BitPacked = 0,
        /// Positions + values of the present entries.
        Sparse = 1,
    }
}

thrift_enum! {
    /// Whether a page covers the whole file or one column chunk.
    PageScope {
        /// A file-wide array (chunk space, column space or CSR).
        File = 0,
        /// One column chunk's page-index array.
        ColumnChunk = 1,
    }
}

/// Which arrays a module may hold in its descriptor (FILE pages).
pub(crate) const fn allowed_in_descriptor(module: Module, array: MetadataArray) -> bool {
    use MetadataArray as A;
    match module {
        Module::Placement => matches!(
            array,
            A::DataPageOffset
                | A::FirstDictionaryPage
                | A::DictionaryPageOffset
                | A::TotalCompressedSize
                | A::TotalUncompressedSize
                | A::NumValues
                | A::Codec
                | A::PhysicalType
                | A::IsFullyDictionaryEncoded
                | A::Encodings
                | A::EncodingStats
                | A::BloomFilterOffset
                | A::BloomFilterLength
                | A::ChunkFileOffset
                | A::SizeStatistics
                | A::EncodingStatsIndex
        ),
        Module::RowGroupStats => is_stat_array(array) || matches!(array, A::DistinctCount),
        Module::OffsetIndex => matches!(
            array,
            A::PageOffset
                | A::CompressedPageSize
                | A::FirstRowIndex
                | A::UnencodedByteArrayDataBytes
                | A::FirstPage
        ),
        Module::ColumnIndex => {
            is_stat_array(array)
                || matches!(
                    array,
                    A::NullPage
                        | A::BoundaryOrder
                        | A::RepetitionLevelHistogram
                        | A::DefinitionLevelHistogram
                        | A::FirstPage
                        | A::FirstRepetitionLevelHistogram
                        | A::FirstDefinitionLevelHistogram
                )
        }
        Module::Schema | Module::FileMetadata | Module::RowGroups => false,
    }
}

/// The statistic arrays shared by ROW_GROUP_STATS and COLUMN_INDEX.
pub(crate) const fn is_stat_array(array: MetadataArray) -> bool {
    use MetadataArray as A;
    matches!(
        array,
        A::NullCount
            | A::NanCount
            | A::MinValue
            | A::MaxValue
            | A::MinMaxPrefix
            | A::MinIsExact
            | A::MaxIsExact
    )
}

/// The value type each array must have.
pub const fn value_type_of(array: MetadataArray) -> ValueType {
    use MetadataArray as A;
    match array {
        A::Codec
        | A::PhysicalType
        | A::CompressedPageSize
        | A::BoundaryOrder
        | A::Encodings
        | A::EncodingStatsIndex
        | A::BloomFilterLength => ValueType::Uint32,
        A::IsFullyDictionaryEncoded | A::MinIsExact | A::MaxIsExact | A::NullPage => {
            ValueType::Boolean
        }
        A::MinValue | A::MaxValue | A::MinMaxPrefix | A::EncodingStats | A::SizeStatistics => {
            ValueType::ByteArray
        }
        _ => ValueType::Uint64,
    }
}

/// The largest valid value of an enum-valued array, if it is one.
pub const fn enum_max(array: MetadataArray) -> Option<u64> {
    match array {
        MetadataArray::Codec | MetadataArray::PhysicalType => Some(7),
        MetadataArray::BoundaryOrder => Some(2),
        _ => None,
    }
}
