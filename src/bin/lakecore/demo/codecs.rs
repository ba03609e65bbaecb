//! Demo section: the varint and bit-packing codecs on a synthetic stream.

use super::Summary;
use crate::util::outln;
use crate::util::{rate, CliResult};
use lakecore::codec::bitpack::{self, BitPacked};
use lakecore::codec::varint::{self, DeltaIter, VarintFormat};
use lakecore::paimon::synth::Rng;
use std::hint::black_box;
use std::time::Instant;

/// Encodes and decodes a synthetic sorted stream (mostly one-byte deltas) and a bit-packed
/// array, timing the lazy iterator, the bulk decoder and the unpacker.
pub(super) fn run(n: usize, summary: &mut Summary) -> CliResult {
    outln!("\n== codecs: delta varints and bit packing ({n} values)");
    let mut rng = Rng::new(42);
    let mut values = Vec::with_capacity(n);
    let mut v = 0u64;
    for _ in 0..n {
        // 7 in 8 deltas fit in one byte, the rest take two or three.
        let r = rng.next_u64();
        v += if r & 7 == 0 {
            (r >> 8) % 100_000
        } else {
            (r >> 8) % 128
        };
        values.push(v);
    }
    let mut stream = Vec::new();
    varint::push_deltas(&mut stream, 0, &values)
        .map_err(|e| crate::util::Failure::invalid("demo", e))?;
    outln!(
        "encoded {} values into {} bytes ({:.2} B/value)",
        n,
        stream.len(),
        stream.len() as f64 / n as f64
    );

    let start = Instant::now();
    let mut sum = 0u64;
    for item in DeltaIter::new(&stream, 0, VarintFormat::SIDECAR).with_count(n as u64) {
        sum = sum.wrapping_add(item.map_err(|e| crate::util::Failure::invalid("demo", e))?);
    }
    let lazy = start.elapsed().as_secs_f64();
    black_box(sum);

    // Filled, not zeroed: a zeroed Vec is lazily mapped, and page faults would be timed.
    let mut out = vec![u64::MAX; n];
    let start = Instant::now();
    let mut it = DeltaIter::new(&stream, 0, VarintFormat::SIDECAR).with_count(n as u64);
    it.decode_into(&mut out)
        .map_err(|e| crate::util::Failure::invalid("demo", e))?;
    let bulk = start.elapsed().as_secs_f64();
    let checked = out == values;
    outln!(
        "lazy DeltaIter:  {}  |  bulk decode_into: {}  |  round trip equal: {checked}",
        rate(n as u64, lazy, ""),
        rate(n as u64, bulk, "")
    );

    let width = 17u8;
    let packed_values: Vec<u64> = values.iter().map(|v| v & ((1 << width) - 1)).collect();
    let packed = bitpack::pack(&packed_values, width)
        .map_err(|e| crate::util::Failure::invalid("demo", e))?;
    let view =
        BitPacked::new(&packed, width, n).map_err(|e| crate::util::Failure::invalid("demo", e))?;
    let mut unpacked = vec![u64::MAX; n];
    let start = Instant::now();
    view.unpack_u64(0, &mut unpacked)
        .map_err(|e| crate::util::Failure::invalid("demo", e))?;
    let unpack = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let mut acc = 0u64;
    let mut index = 0usize;
    for _ in 0..n {
        index = (index + 7919) % n;
        acc = acc.wrapping_add(view.get(index).unwrap_or(0));
    }
    let random = start.elapsed().as_secs_f64();
    black_box(acc);
    outln!(
        "bit-unpack width {width}: {}  |  random get(i): {:.2} ns/lookup  |  round trip equal: {}",
        rate(n as u64, unpack, ""),
        random * 1e9 / n as f64,
        unpacked == packed_values
    );
    summary.push(format!(
        "codecs: delta varints {} (lazy) / {} (bulk), bit-unpack {}",
        rate(n as u64, lazy, ""),
        rate(n as u64, bulk, ""),
        rate(n as u64, unpack, "")
    ));
    Ok(())
}
