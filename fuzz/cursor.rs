//! Bolero harness for the byte cursor: random read sequences over random bytes never panic,
//! agree with `from_be_bytes`/`from_le_bytes`, and never move the cursor on failure.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use bolero::check;
use lakecore::codec::varint::VarintFormat;
use lakecore::cursor::Cursor;
use lakecore::ErrorKind;

#[test]
fn read_sequences_are_checked() {
    check!()
        .with_type::<(u32, Vec<u8>, Vec<u8>)>()
        .with_iterations(20_000)
        .for_each(|(origin, ops, bytes)| {
            let origin = u64::from(*origin);
            let mut c = Cursor::with_origin(bytes, origin);
            for op in ops {
                let before = c.index();
                let rest = &bytes[before..];
                let (ok, width) = match op % 9 {
                    0 => (
                        c.u8().map(u64::from).ok() == rest.first().map(|&b| u64::from(b)),
                        1,
                    ),
                    1 => (
                        c.u16_le().ok()
                            == rest
                                .get(..2)
                                .map(|s| u16::from_le_bytes(s.try_into().unwrap())),
                        2,
                    ),
                    2 => (
                        c.u32_be().ok()
                            == rest
                                .get(..4)
                                .map(|s| u32::from_be_bytes(s.try_into().unwrap())),
                        4,
                    ),
                    3 => (
                        c.i64_le().ok()
                            == rest
                                .get(..8)
                                .map(|s| i64::from_le_bytes(s.try_into().unwrap())),
                        8,
                    ),
                    4 => (
                        c.i64_be().ok()
                            == rest
                                .get(..8)
                                .map(|s| i64::from_be_bytes(s.try_into().unwrap())),
                        8,
                    ),
                    5 => {
                        let n = usize::from(op / 9);
                        (c.bytes(n).ok() == rest.get(..n), n)
                    }
                    _ => {
                        let format = [
                            VarintFormat::SIDECAR,
                            VarintFormat::U64,
                            VarintFormat::U64_LENIENT,
                        ][usize::from(op % 3)];
                        let expect = lakecore::codec::varint::decode_u64(rest, format);
                        match c.uvarint(format) {
                            Ok(v) => (
                                expect.map(|e| e.0).ok() == Some(v),
                                expect.map(|e| e.1).unwrap_or(0),
                            ),
                            Err(e) => {
                                let x = expect.unwrap_err();
                                assert_eq!(
                                    (e.kind, e.offset),
                                    (x.kind, x.offset + origin + before as u64)
                                );
                                (true, 0)
                            }
                        }
                    }
                };
                assert!(ok);
                let moved = c.index() - before;
                assert!(
                    moved == 0 || moved == width,
                    "moved {moved} for width {width}"
                );
                if moved == 0 && width > 0 && rest.len() < width {
                    // A failed read reports truncation at the end of the input.
                    let mut probe = c;
                    let e = probe.bytes(width).unwrap_err();
                    assert_eq!(
                        (e.kind, e.offset),
                        (ErrorKind::Truncated, origin + bytes.len() as u64)
                    );
                }
            }
            assert_eq!(c.position(), origin + c.index() as u64);
            assert_eq!(c.remaining(), bytes.len() - c.index());
        });
}
