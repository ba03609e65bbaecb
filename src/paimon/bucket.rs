//! Paimon's fixed-bucket assignment (feature `paimon`): the bucket key written as a
//! `BinaryRow`, hashed with Paimon's word-wise MurmurHash3 (seed 42), and the bucket
//! `|hash % buckets|` with Java's remainder, as the Java, Python and Rust writers compute it.
//! A query with equality on every bucket-key field therefore names one bucket per bucket
//! count.

use super::predicate::{PartitionType, Value};
use alloc::vec::Vec;

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;
const SEED: u32 = 42;

/// Paimon's `MurmurHashUtils.hashBytesByWords`: MurmurHash3 x86_32 over the whole 4-byte
/// little-endian words of `data` (a trailing partial word is ignored, as Paimon does; rows
/// are word-aligned), finalised with the full length.
///
/// ```
/// // The BinaryRow of the INT 42, as Paimon writes it: 8 bytes of header, one 8-byte slot.
/// let row = [0, 0, 0, 0, 0, 0, 0, 0, 42, 0, 0, 0, 0, 0, 0, 0];
/// assert_eq!(lakecore::paimon::bucket::hash_bytes_by_words(&row), 907_821_237);
/// ```
pub fn hash_bytes_by_words(data: &[u8]) -> u32 {
    let mut h = SEED;
    let (words, _) = data.as_chunks::<4>();
    for word in words {
        let mut k = u32::from_le_bytes(*word);
        k = k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h = (h ^ k)
            .rotate_left(13)
            .wrapping_mul(5)
            .wrapping_add(0xe654_6b64);
    }
    // The length is a usize; Paimon mixes it in as a 32-bit int.
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// The bucket of a key hash among `buckets` buckets: `|hash % buckets|` with a signed,
/// truncating remainder (Java's `Math.abs(hash % n)`); `None` unless `buckets > 0`.
///
/// ```
/// use lakecore::paimon::bucket::bucket_of;
/// assert_eq!(bucket_of(3_154_499_415, 8), Some(1));
/// assert_eq!(bucket_of(3_154_499_415, 16), Some(9));
/// assert_eq!(bucket_of(1, 0), None);
/// ```
pub fn bucket_of(hash: u32, buckets: i32) -> Option<i32> {
    if buckets <= 0 {
        return None;
    }
    let signed = i32::from_ne_bytes(hash.to_ne_bytes());
    Some((signed % buckets).abs())
}

/// The `BinaryRow` (without the 4-byte arity prefix) of `values` typed by their types, as
/// Paimon's `BinaryRowWriter` lays it out: the null-bit region (row kind INSERT in byte 0,
/// field `i`'s null bit at bit `i + 8`), one 8-byte little-endian slot per field, strings and
/// binaries of at most 7 bytes inline (`0x80 | len` in the slot's last byte), longer ones in
/// the variable part padded to 8 bytes (`offset << 32 | len` in the slot). `None` for a type
/// this writer does not lay out.
pub(super) fn binary_row(values: &[(PartitionType, &Value)]) -> Option<Vec<u8>> {
    let arity = values.len();
    let null_len = (arity + 71) / 64 * 8;
    let fixed = null_len + 8 * arity;
    let mut row = alloc::vec![0u8; fixed];
    for (i, (ty, value)) in values.iter().enumerate() {
        let slot = null_len + 8 * i;
        let mut put = |bytes: &[u8]| {
            if let Some(dst) = row.get_mut(slot..slot + bytes.len()) {
                dst.copy_from_slice(bytes);
            }
        };
        match (ty, value) {
            (_, Value::Null) => {
                let bit = i + 8;
                if let Some(b) = row.get_mut(bit / 8) {
                    *b |= 1 << (bit % 8);
                }
            }
            (PartitionType::Boolean, Value::Bool(b)) => put(&[u8::from(*b)]),
            (PartitionType::TinyInt, Value::Int(v)) => put(&i8::try_from(*v).ok()?.to_le_bytes()),
            (PartitionType::SmallInt, Value::Int(v)) => put(&i16::try_from(*v).ok()?.to_le_bytes()),
            (PartitionType::Int | PartitionType::Date, Value::Int(v)) => {
                put(&i32::try_from(*v).ok()?.to_le_bytes())
            }
            (PartitionType::BigInt | PartitionType::Decimal { .. }, Value::Int(v)) => {
                put(&v.to_le_bytes())
            }
            (PartitionType::Float, Value::F32(v)) => put(&v.to_le_bytes()),
            (PartitionType::Double, Value::F64(v)) => put(&v.to_le_bytes()),
            (PartitionType::String | PartitionType::Binary, Value::Bytes(b)) => {
                if b.len() <= 7 {
                    let mut inline = [0u8; 8];
                    inline.get_mut(..b.len())?.copy_from_slice(b);
                    *inline.last_mut()? = 0x80 | u8::try_from(b.len()).ok()?;
                    put(&inline);
                } else {
                    let offset = u64::try_from(row.len()).ok()?;
                    let len = u64::try_from(b.len()).ok()?;
                    let word = (offset << 32) | len;
                    if let Some(dst) = row.get_mut(slot..slot + 8) {
                        dst.copy_from_slice(&word.to_le_bytes());
                    }
                    row.extend_from_slice(b);
                    row.resize(row.len().div_ceil(8) * 8, 0);
                }
            }
            _ => return None,
        }
    }
    Some(row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    /// Golden vectors from pypaimon 2.1.0 (`RowKeyExtractor._binary_row_hash_code`,
    /// `GenericRowSerializer.to_bytes`, `_bucket_from_hash` for 1, 3, 4, 8 and 16 buckets).
    /// A golden case: typed values, their hash, buckets for 1/3/4/8/16, the row as hex.
    type Golden = (Vec<(PartitionType, Value)>, u32, [i32; 5], &'static str);

    #[test]
    fn pypaimon_golden_rows_hashes_and_buckets() {
        let s = |t: &str| Value::Bytes(t.as_bytes().to_vec());
        let cases: Vec<Golden> = vec![
            (
                vec![(PartitionType::Int, Value::Int(42))],
                907_821_237,
                [0, 0, 1, 5, 5],
                "00000000000000002a00000000000000",
            ),
            (
                vec![(PartitionType::Int, Value::Int(4242))],
                3_154_499_415,
                [0, 1, 1, 1, 9],
                "00000000000000009210000000000000",
            ),
            (
                vec![(PartitionType::BigInt, Value::Int(-7))],
                1_145_478_327,
                [0, 0, 3, 7, 7],
                "0000000000000000f9ffffffffffffff",
            ),
            (
                vec![(PartitionType::String, s("abc"))],
                4_193_044_877,
                [0, 2, 3, 3, 3],
                "00000000000000006162630000000083",
            ),
            (
                vec![(PartitionType::String, s("a longer string!"))],
                1_122_140_550,
                [0, 0, 2, 6, 6],
                "0000000000000000100000001000000061206c6f6e67657220737472696e6721",
            ),
            (
                vec![
                    (PartitionType::Int, Value::Int(1)),
                    (PartitionType::String, s("x")),
                ],
                3_498_577_523,
                [0, 2, 1, 5, 13],
                "000000000000000001000000000000007800000000000081",
            ),
            (
                vec![(PartitionType::Int, Value::Null)],
                2_546_641_952,
                [0, 2, 0, 0, 0],
                "00010000000000000000000000000000",
            ),
        ];
        for (values, hash, buckets, hex) in cases {
            let typed: Vec<(PartitionType, &Value)> = values.iter().map(|(t, v)| (*t, v)).collect();
            let row = binary_row(&typed).unwrap();
            let got: alloc::string::String =
                row.iter().map(|b| alloc::format!("{b:02x}")).collect();
            assert_eq!(got, hex, "{values:?}");
            assert_eq!(hash_bytes_by_words(&row), hash, "{values:?}");
            for (n, want) in [1, 3, 4, 8, 16].into_iter().zip(buckets) {
                assert_eq!(bucket_of(hash, n), Some(want), "{values:?} {n}");
            }
        }
    }
}
