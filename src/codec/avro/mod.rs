//! Avro over borrowed bytes (`no_std`, no allocation): object-container framing and datums
//! walked in place.
//!
//! [`Container`] knows the container: magic `Obj\x01`, the metadata map (`avro.schema`,
//! `avro.codec`, ...), the 16-byte sync marker, and the block list (object-count varint,
//! size varint, data, sync) with every length checked. It does not decompress blocks (the
//! codecs live with their users, e.g. `paimon::manifest`).
//!
//! [`Schema`] compiles the writer schema from the header once into a flat decode program;
//! [`Schema::project`] names the fields a caller wants by path, and [`Schema::read`] walks a
//! datum in place, returning those fields as borrowed [`Value`]s and stepping over every
//! other field by its length prefixes. Schema evolution is by field name: a projected field
//! the writer did not write reads as [`Value::Absent`].
//!
//! ```
//! use lakecore::codec::avro::Container;
//! // Header: magic, a one-entry map {"avro.codec": "null"}, end of map, 16-byte sync.
//! let mut file = b"Obj\x01\x02\x14avro.codec\x08null\x00".to_vec();
//! file.extend_from_slice(&[7u8; 16]);
//! let header_len = file.len() as u64;
//! // One block: 2 objects, 3 data bytes, sync.
//! file.extend_from_slice(&[0x04, 0x06, 1, 2, 3]);
//! file.extend_from_slice(&[7u8; 16]);
//! let c = Container::parse(&file)?;
//! assert_eq!(c.header_len(), header_len);
//! assert_eq!(c.metadata("avro.codec"), Some(&b"null"[..]));
//! let blocks: Vec<_> = c.blocks().collect::<Result<_, _>>()?;
//! assert_eq!((blocks[0].offset, blocks[0].length, blocks[0].object_count), (header_len, 21, 2));
//! # Ok::<(), lakecore::Error>(())
//! ```

use crate::cursor::Cursor;
use crate::error::{off, Error, ErrorKind, Result};

mod datum;
mod json;
mod program;
mod schema;

use datum::{length, long};
pub use datum::{length as read_length, long as read_long};
pub use datum::{ItemIter, Items, Value, MAX_EMPTY_ITEMS};
pub use json::MAX_JSON_DEPTH;
pub use schema::{Projection, Schema, Type, MAX_DEPTH, MAX_LINKS, MAX_NAMED, MAX_NODES};

/// The object-container magic.
pub const MAGIC: [u8; 4] = *b"Obj\x01";
/// Sync marker length.
pub const SYNC_LEN: usize = 16;

/// A parsed object-container header over borrowed bytes.
#[derive(Clone, Copy, Debug)]
pub struct Container<'a> {
    bytes: &'a [u8],
    header_len: usize,
    metadata: &'a [u8],
    metadata_at: u64,
    sync: &'a [u8; SYNC_LEN],
}

impl<'a> Container<'a> {
    /// Parses the header of the container file `bytes` (the whole file, or at least its
    /// header for [`header`](Self::header) and [`metadata`](Self::metadata)).
    ///
    /// ```
    /// use lakecore::codec::avro::Container;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs/manifest/manifest-6cad7308-d3f7-4ac5-8249-b99d45dd3a6f-0");
    /// let manifest = std::fs::read(path).unwrap();
    /// let container = Container::parse(&manifest)?;
    /// assert_eq!((container.codec(), container.header_len()), (&b"zstandard"[..], 2269));
    /// assert!(container.metadata("avro.schema").is_some());
    /// let blocks = container.blocks().collect::<Result<Vec<_>, _>>()?;
    /// assert_eq!(blocks.len(), 6);
    /// assert_eq!(blocks[0].offset, 2269);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn parse(bytes: &'a [u8]) -> Result<Self> {
        let mut c = Cursor::new(bytes);
        if c.array::<4>()? != &MAGIC {
            return Err(Error::new(ErrorKind::BadMagic, 0));
        }
        let metadata_at = c.position();
        let start = c.index();
        loop {
            let at = c.position();
            let count = long(&mut c)?;
            if count == 0 {
                break;
            }
            if count < 0 {
                length(&mut c)?; // byte size of the map block, unused
            }
            let count = count.unsigned_abs();
            if count > off(c.remaining()) {
                return Err(Error::new(ErrorKind::InvalidLength, at));
            }
            for _ in 0..count {
                let n = length(&mut c)?;
                c.bytes_u64(n)?;
                let n = length(&mut c)?;
                c.bytes_u64(n)?;
            }
        }
        let metadata = bytes.get(start..c.index()).unwrap_or_default();
        let sync = c.array::<SYNC_LEN>()?;
        Ok(Container {
            bytes,
            header_len: c.index(),
            metadata,
            metadata_at,
            sync,
        })
    }

    /// Header length in bytes (magic + metadata + sync).
    pub fn header_len(&self) -> u64 {
        off(self.header_len)
    }

    /// The header bytes `[0, header_len)`.
    pub fn header(&self) -> &'a [u8] {
        self.bytes.get(..self.header_len).unwrap_or_default()
    }

    /// The sync marker.
    pub fn sync(&self) -> &'a [u8; SYNC_LEN] {
        self.sync
    }

    /// The metadata entries `(key, value)` in file order.
    pub fn metadata_entries(&self) -> MetadataEntries<'a> {
        MetadataEntries {
            c: Cursor::with_origin(self.metadata, self.metadata_at),
            left: 0,
        }
    }

    /// The value of metadata key `key` (first occurrence).
    pub fn metadata(&self, key: &str) -> Option<&'a [u8]> {
        self.metadata_entries()
            .find(|(k, _)| *k == key.as_bytes())
            .map(|(_, v)| v)
    }

    /// The codec name (`avro.codec`, `null` when absent).
    pub fn codec(&self) -> &'a [u8] {
        self.metadata("avro.codec").unwrap_or(b"null")
    }

    /// The data blocks after the header, each checked (lengths, sync marker).
    pub fn blocks(&self) -> AvroBlocks<'a> {
        AvroBlocks {
            c: Cursor::new(self.bytes),
            sync: self.sync,
            started: false,
            header_len: self.header_len,
            failed: false,
        }
    }
    /// The one block that starts at absolute offset `offset` (e.g. a block a sidecar
    /// located), checked as [`blocks`](Self::blocks) checks each: lengths and sync marker.
    /// [`ErrorKind::OutOfBounds`] at `offset` when it lies inside the header.
    pub fn block_at(&self, offset: u64) -> Result<AvroBlock<'a>> {
        let start = usize::try_from(offset)
            .ok()
            .filter(|&s| s >= self.header_len)
            .ok_or(Error::new(ErrorKind::OutOfBounds, offset))?;
        let mut c = Cursor::new(self.bytes);
        c.skip(start)?;
        let mut blocks = AvroBlocks {
            c,
            sync: self.sync,
            started: true,
            header_len: self.header_len,
            failed: false,
        };
        blocks.step()
    }

    /// The one block at absolute offset `offset` whose bytes start `bytes` (a range fetched
    /// from the file, e.g. by an object-store read of a block a sidecar located), checked as
    /// [`block_at`](Self::block_at) checks it, with this header's sync marker. Offsets in the
    /// result and in errors are absolute. [`ErrorKind::OutOfBounds`] at `offset` when it lies
    /// inside the header.
    ///
    /// ```
    /// use lakecore::codec::avro::Container;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/paimon/warehouse/sc.db/bucket4_rs/manifest/manifest-6cad7308-d3f7-4ac5-8249-b99d45dd3a6f-0");
    /// let manifest = std::fs::read(path).unwrap();
    /// let container = Container::parse(&manifest)?;
    /// let second = container.blocks().nth(1).unwrap()?;
    /// let range = &manifest[second.offset as usize..][..second.length as usize];
    /// let header_only = Container::parse(container.header())?;
    /// assert_eq!(header_only.block_in(range, second.offset)?, second);
    /// # Ok::<(), lakecore::Error>(())
    /// ```
    pub fn block_in(&self, bytes: &'a [u8], offset: u64) -> Result<AvroBlock<'a>> {
        if offset < off(self.header_len) {
            return Err(Error::new(ErrorKind::OutOfBounds, offset));
        }
        let mut blocks = AvroBlocks {
            c: Cursor::with_origin(bytes, offset),
            sync: self.sync,
            started: true,
            header_len: self.header_len,
            failed: false,
        };
        blocks.step()
    }
}

/// Metadata map entries; see [`Container::metadata_entries`].
#[derive(Clone, Debug)]
pub struct MetadataEntries<'a> {
    c: Cursor<'a>,
    left: u64,
}

impl<'a> Iterator for MetadataEntries<'a> {
    type Item = (&'a [u8], &'a [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        // Already validated by `Container::parse`; any failure ends the walk.
        while self.left == 0 {
            let count = long(&mut self.c).ok()?;
            if count == 0 {
                return None;
            }
            if count < 0 {
                length(&mut self.c).ok()?;
            }
            self.left = count.unsigned_abs();
        }
        self.left -= 1;
        let n = length(&mut self.c).ok()?;
        let k = self.c.bytes_u64(n).ok()?;
        let n = length(&mut self.c).ok()?;
        let v = self.c.bytes_u64(n).ok()?;
        Some((k, v))
    }
}

/// One data block of a container file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AvroBlock<'a> {
    /// Offset of the block's object-count varint.
    pub offset: u64,
    /// Length: count varint + size varint + data + sync.
    pub length: u64,
    /// Objects (records) in the block.
    pub object_count: u64,
    /// The (possibly compressed) data.
    pub data: &'a [u8],
    /// Absolute offset of `data`.
    pub data_offset: u64,
}

/// The data blocks of a container; see [`Container::blocks`].
#[derive(Clone, Debug)]
pub struct AvroBlocks<'a> {
    c: Cursor<'a>,
    sync: &'a [u8; SYNC_LEN],
    started: bool,
    header_len: usize,
    failed: bool,
}

impl<'a> AvroBlocks<'a> {
    fn step(&mut self) -> Result<AvroBlock<'a>> {
        let offset = self.c.position();
        let object_count = length(&mut self.c)?;
        let size = length(&mut self.c)?;
        let data_offset = self.c.position();
        let data = self.c.bytes_u64(size)?;
        let sync_at = self.c.position();
        if self.c.array::<SYNC_LEN>()? != self.sync {
            return Err(Error::new(ErrorKind::Mismatch, sync_at));
        }
        Ok(AvroBlock {
            offset,
            length: self.c.position() - offset,
            object_count,
            data,
            data_offset,
        })
    }
}

impl<'a> Iterator for AvroBlocks<'a> {
    type Item = Result<AvroBlock<'a>>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if !self.started {
            self.started = true;
            if let Err(e) = self.c.skip(self.header_len) {
                self.failed = true;
                return Some(Err(e));
            }
        }
        if self.c.is_empty() {
            return None;
        }
        let r = self.step();
        self.failed = r.is_err();
        Some(r)
    }
}

impl core::iter::FusedIterator for AvroBlocks<'_> {}
