//! `lakecore demo`: generated data through every format, with throughput figures.
//!
//! Runs without arguments on embedded defaults so a newcomer sees what each layer does.

use crate::util::CliResult;
use lakecore::codec::bitpack::{self, BitPacked};
use lakecore::codec::varint::{self, DeltaIter, VarintFormat};
use std::hint::black_box;
use std::time::Instant;

/// Options of `lakecore demo`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Values in the synthetic delta stream.
    #[arg(long, default_value_t = 4_000_000)]
    pub values: usize,
}

/// Runs every demo section.
pub fn run(args: &Args) -> CliResult {
    println!(
        "lakecore demo (kernel tier: {})",
        lakecore::arch::active_tier().name()
    );
    codecs(args.values)?;
    crate::sidecar::demo(50_000, 200)?;
    crate::blob::demo(1_000_000)?;
    crate::footer::demo()
}

/// A small deterministic generator (xorshift64*), so runs are repeatable.
pub struct Rng(u64);

impl Rng {
    /// A generator from a non-zero seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }
    /// The next pseudo-random value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn rate(count: usize, seconds: f64) -> String {
    let per_second = count as f64 / seconds.max(1e-9);
    if per_second >= 1e9 {
        format!("{:.2} G/s", per_second / 1e9)
    } else {
        format!("{:.1} M/s", per_second / 1e6)
    }
}

/// Encodes and decodes a synthetic sorted stream (mostly one-byte deltas) and a bit-packed
/// array, timing the lazy iterator, the bulk decoder and the unpacker.
fn codecs(n: usize) -> CliResult {
    println!("\n== codecs: delta varints and bit packing ({n} values)");
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
    println!(
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

    let mut out = vec![0u64; n];
    let start = Instant::now();
    let mut it = DeltaIter::new(&stream, 0, VarintFormat::SIDECAR).with_count(n as u64);
    it.decode_into(&mut out)
        .map_err(|e| crate::util::Failure::invalid("demo", e))?;
    let bulk = start.elapsed().as_secs_f64();
    let checked = out == values;
    println!(
        "lazy DeltaIter:  {}  |  bulk decode_into: {}  |  round trip equal: {checked}",
        rate(n, lazy),
        rate(n, bulk)
    );

    let width = 17u8;
    let packed_values: Vec<u64> = values.iter().map(|v| v & ((1 << width) - 1)).collect();
    let packed = bitpack::pack(&packed_values, width)
        .map_err(|e| crate::util::Failure::invalid("demo", e))?;
    let view =
        BitPacked::new(&packed, width, n).map_err(|e| crate::util::Failure::invalid("demo", e))?;
    let mut unpacked = vec![0u64; n];
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
    println!(
        "bit-unpack width {width}: {}  |  random get(i): {:.2} ns/lookup  |  round trip equal: {}",
        rate(n, unpack),
        random * 1e9 / n as f64,
        unpacked == packed_values
    );
    Ok(())
}
