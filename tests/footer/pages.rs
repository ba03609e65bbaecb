#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "alloc")]
//! Metadata page headers and payload views: the profile's worked bytes, and the page rules.

use lakecore::codec::thrift::Writer;
use lakecore::footer::{
    encode_page, ArrayEncoding, ArrayPage, EncodingHeader, MetadataArray, MetadataPageHeader,
    Module, PageScope, ValueType, Values,
};
use lakecore::ErrorKind;

/// Independent LSB-first packer.
fn pack(values: &[u64], w: u32) -> Vec<u8> {
    let bits = values.len() * w as usize;
    let mut out = vec![0u8; bits.div_ceil(8)];
    for (i, &v) in values.iter().enumerate() {
        for b in 0..w as usize {
            if v >> b & 1 == 1 {
                let bit = i * w as usize + b;
                out[bit / 8] |= 1 << (bit % 8);
            }
        }
    }
    out
}

/// Header fields written field by field (test-side encoder).
#[derive(Clone, Copy)]
struct H {
    module: i32,
    array: i32,
    vt: i32,
    enc: i32,
    nv: i32,
    pl: i32,
    /// (member, a, b, c): member 1 = bit_packed(width a); 2 = sparse(np a, pw b, vw c).
    eh: (i16, i32, i8, i8),
    scope: i32,
    ords: Option<(i32, i32)>,
}

fn header(h: H) -> Vec<u8> {
    let mut w = Writer::new();
    w.struct_begin();
    w.field_i32(1, h.module);
    w.field_i32(2, h.array);
    w.field_i32(3, h.vt);
    w.field_i32(4, h.enc);
    w.field_i32(5, h.nv);
    w.field_i32(6, h.pl);
    w.field_struct(7);
    w.field_struct(h.eh.0);
    if h.eh.0 == 1 {
        w.field_i8(1, h.eh.1 as i8);
    } else {
        w.field_i32(1, h.eh.1);
        w.field_i8(2, h.eh.2);
        w.field_i8(3, h.eh.3);
    }
    w.struct_end();
    w.struct_end();
    w.field_i32(8, h.scope);
    if let Some((c, g)) = h.ords {
        w.field_i32(9, c);
        w.field_i32(10, g);
    }
    w.struct_end();
    w.into_bytes()
}

fn dense_u32(nv: i32, pl: i32, width: i32) -> H {
    H {
        module: 1,
        array: 6,
        vt: 1,
        enc: 0,
        nv,
        pl,
        eh: (1, width, 0, 0),
        scope: 0,
        ords: None,
    }
}

#[test]
fn worked_bytes_bit_packed_u32() {
    assert_eq!(pack(&[1, 2, 3, 4, 5], 3), [0xd1, 0x58]);
    let mut page = header(dense_u32(5, 2, 3));
    page.extend_from_slice(&[0xd1, 0x58]);
    let view = ArrayPage::parse(&page, 0).unwrap();
    let got: Vec<u64> = (0..5).map(|i| view.get(i).unwrap().unwrap()).collect();
    assert_eq!(got, [1, 2, 3, 4, 5]);
    let mut out = [0u64; 3];
    view.unpack_u64(2, &mut out).unwrap();
    assert_eq!(out, [3, 4, 5]);
    // The crate's writer produces the same page.
    let vals: Vec<Option<u64>> = [1, 2, 3, 4, 5].map(Some).to_vec();
    let written = encode_page(
        Module::Placement,
        MetadataArray::Codec,
        &Values::Ints(&vals),
        None,
        true,
    );
    // CODEC values above 7 are invalid, so only compare the payload shape: width 3 chosen.
    let written = written.unwrap();
    assert_eq!(&written[written.len() - 2..], &[0xd1, 0x58]);
}

#[test]
fn worked_bytes_sparse_u32() {
    assert_eq!(pack(&[2, 7], 4), [0x72]);
    assert_eq!(pack(&[5, 0], 3), [0x05]);
    let h = H {
        enc: 1,
        nv: 10,
        pl: 2,
        eh: (2, 2, 4, 3),
        module: 4,
        array: 44,
        ..dense_u32(0, 0, 0)
    };
    let mut page = header(h);
    page.extend_from_slice(&[0x72, 0x05]);
    // BOUNDARY_ORDER enum values are at most 2; use an unchecked array instead.
    let mut h2 = h;
    h2.module = 3;
    h2.array = 41; // COMPRESSED_PAGE_SIZE, UINT32
    let mut page2 = header(h2);
    page2.extend_from_slice(&[0x72, 0x05]);
    let view = ArrayPage::parse(&page2, 0).unwrap();
    assert!(view.is_sparse());
    let got: Vec<Option<u64>> = (0..10).map(|i| view.get(i).unwrap()).collect();
    let mut want = vec![None; 10];
    want[2] = Some(5);
    want[7] = Some(0); // a present zero stays present
    assert_eq!(got, want);
    // The writer's sparse encoding matches the worked bytes.
    let written = encode_page(
        Module::OffsetIndex,
        MetadataArray::CompressedPageSize,
        &Values::Ints(&want),
        None,
        false,
    )
    .unwrap();
    assert_eq!(&written[written.len() - 2..], &[0x72, 0x05]);
    let hdr = MetadataPageHeader::parse(&written, 0).unwrap();
    assert_eq!(
        hdr.encoding_header,
        EncodingHeader::Sparse {
            num_present: 2,
            position_bit_width: 4,
            value_bit_width: 3
        }
    );
    // BOUNDARY_ORDER 5 is out of range on access.
    let v = ArrayPage::parse(&page, 0).unwrap();
    assert_eq!(v.get(2).unwrap_err().kind, ErrorKind::InvalidValue);
}

#[test]
fn worked_bytes_byte_array() {
    assert_eq!(pack(&[0, 2, 2, 5], 3), [0x90, 0x0a]);
    let h = H {
        module: 2,
        array: 21,
        vt: 3,
        nv: 3,
        pl: 7,
        eh: (1, 3, 0, 0),
        ..dense_u32(0, 0, 0)
    };
    let mut page = header(h);
    page.extend_from_slice(&[0x90, 0x0a, b'a', b'b', b'x', b'y', b'z']);
    let view = ArrayPage::parse(&page, 0).unwrap();
    let got: Vec<&[u8]> = (0..3)
        .map(|i| view.get_bytes(i).unwrap().unwrap())
        .collect();
    assert_eq!(got, [&b"ab"[..], b"", b"xyz"]);
    let vals = [Some(&b"ab"[..]), Some(b""), Some(b"xyz")];
    let written = encode_page(
        Module::RowGroupStats,
        MetadataArray::MinValue,
        &Values::Bytes(&vals),
        None,
        false,
    )
    .unwrap();
    assert_eq!(written, page);
}

#[test]
fn worked_bytes_header() {
    let file = [
        0x15, 0x02, 0x15, 0x00, 0x15, 0x04, 0x15, 0x00, 0x15, 0x0C, 0x15, 0x1E, 0x1C, 0x1C, 0x13,
        0x14, 0x00, 0x00, 0x15, 0x00, 0x00,
    ];
    let h = MetadataPageHeader::parse(&file, 0).unwrap();
    assert_eq!(h.module, Module::Placement);
    assert_eq!(h.array, MetadataArray::DataPageOffset);
    assert_eq!(h.value_type, ValueType::Uint64);
    assert_eq!(h.encoding, ArrayEncoding::BitPacked);
    assert_eq!((h.num_values, h.payload_length, h.header_len), (6, 15, 21));
    assert_eq!(
        h.encoding_header,
        EncodingHeader::BitPacked { bit_width: 20 }
    );
    assert_eq!(h.scope, PageScope::File);
    let cc_tail = [0x15, 0x02, 0x15, 0x06, 0x15, 0x02, 0x00];
    let mut cc = file[..18].to_vec();
    cc.extend_from_slice(&cc_tail);
    assert_eq!(cc.len(), 25);
    let h = MetadataPageHeader::parse(&cc, 0).unwrap();
    assert_eq!(h.scope, PageScope::ColumnChunk);
    assert_eq!(
        (h.column_ordinal, h.row_group_ordinal, h.header_len),
        (Some(3), Some(1), 25)
    );
    // The crate's writer emits exactly these header bytes.
    let vals: Vec<Option<u64>> = vec![Some(1 << 19); 6];
    let w = encode_page(
        Module::Placement,
        MetadataArray::DataPageOffset,
        &Values::Ints(&vals),
        None,
        true,
    )
    .unwrap();
    assert_eq!(&w[..21], &file);
    let w = encode_page(
        Module::Placement,
        MetadataArray::DataPageOffset,
        &Values::Ints(&vals),
        Some((3, 1)),
        true,
    )
    .unwrap();
    assert_eq!(&w[..25], &cc[..]);
}

/// The FORMATS.md worked bytes of a FIRST_PAGE page: chunk 0 has pages 0..2, chunk 1 page 2.
#[test]
fn worked_bytes_first_page() {
    let want = [
        0x15, 0x06, 0x15, 0x62, 0x15, 0x04, 0x15, 0x00, 0x15, 0x06, 0x15, 0x02, 0x1C, 0x1C, 0x13,
        0x02, 0x00, 0x00, 0x15, 0x00, 0x00, 0x38,
    ];
    let vals = [Some(0), Some(2), Some(3)];
    let page = encode_page(
        Module::OffsetIndex,
        MetadataArray::FirstPage,
        &Values::Ints(&vals),
        None,
        true,
    )
    .unwrap();
    assert_eq!(page, want);
    let v = ArrayPage::parse(&want, 0).unwrap();
    let got: Vec<u64> = (0..3).map(|i| v.get_dense(i).unwrap()).collect();
    assert_eq!(got, [0, 2, 3]);
}

/// A window (a chunk's slice of a FILE page) behaves like the naive sub-vector: values,
/// presence, present count, dense reads and validation; ranges past the view are errors.
#[test]
fn windows_match_naive_model() {
    let mut seed = 0x2545f4914f6cdd1du64;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for n in [1usize, 2, 17, 100, 600] {
        for density in [1u64, 2, 3] {
            let vals: Vec<Option<u64>> = (0..n)
                .map(|_| (rnd() % density == 0).then(|| rnd() % 5000))
                .collect();
            let bytes: Vec<Option<Vec<u8>>> = vals
                .iter()
                .map(|v| v.map(|x| x.to_string().into_bytes()))
                .collect();
            let refs: Vec<Option<&[u8]>> = bytes.iter().map(|b| b.as_deref()).collect();
            let ints = encode_page(
                Module::ColumnIndex,
                MetadataArray::NullCount,
                &Values::Ints(&vals),
                None,
                false,
            )
            .unwrap();
            let strs = encode_page(
                Module::ColumnIndex,
                MetadataArray::MinValue,
                &Values::Bytes(&refs),
                None,
                false,
            )
            .unwrap();
            let iv = ArrayPage::parse(&ints, 0).unwrap();
            let sv = ArrayPage::parse(&strs, 0).unwrap();
            for _ in 0..20 {
                let a = (rnd() as usize) % (n + 1);
                let len = (rnd() as usize) % (n - a + 1);
                let (w, ws) = (iv.window(a, len).unwrap(), sv.window(a, len).unwrap());
                w.validate().unwrap();
                ws.validate().unwrap();
                assert_eq!((w.len(), w.base()), (len, a));
                let want = &vals[a..a + len];
                let present = want.iter().filter(|v| v.is_some()).count();
                assert_eq!(w.num_present(), present);
                assert_eq!(ws.num_present(), present);
                let flat: Vec<u64> = want.iter().flatten().copied().collect();
                assert_eq!(w.window_values().collect::<Vec<_>>(), flat);
                for (i, v) in want.iter().enumerate() {
                    assert_eq!(w.get(i).unwrap(), *v);
                    assert_eq!(ws.get_bytes(i).unwrap(), bytes[a + i].as_deref());
                    if !w.is_sparse() {
                        assert_eq!(w.get_dense(i).unwrap(), v.unwrap());
                    }
                }
                assert_eq!(w.get(len).unwrap_err().kind, ErrorKind::OutOfBounds);
                // A window of a window composes; past the view is an error.
                if len > 1 {
                    let inner = w.window(1, len - 1).unwrap();
                    assert_eq!(
                        inner.get(0).unwrap().as_ref(),
                        want.get(1).and_then(|v| v.as_ref())
                    );
                }
                assert_eq!(
                    w.window(0, len + 1).unwrap_err().kind,
                    ErrorKind::OutOfBounds
                );
                if !w.is_sparse() && len > 0 {
                    let mut out = vec![0u64; len];
                    w.unpack_u64(0, &mut out).unwrap();
                    assert_eq!(out, flat);
                    assert!(w.unpack_u64(1, &mut out).is_err());
                }
            }
        }
    }
}

fn err(page: &[u8]) -> (ErrorKind, u64) {
    let e = ArrayPage::parse(page, 100).unwrap_err();
    (e.kind, e.offset)
}

#[test]
fn page_rules() {
    // Payload length disagrees with the derived size.
    let mut p = header(dense_u32(5, 3, 3));
    let hl = p.len() as u64;
    p.extend_from_slice(&[0xd1, 0x58, 0x00]);
    assert_eq!(err(&p), (ErrorKind::InvalidLength, 100 + hl));
    // Bytes given are not header + payload_length.
    let mut p = header(dense_u32(5, 2, 3));
    p.extend_from_slice(&[0xd1]);
    assert_eq!(err(&p), (ErrorKind::Mismatch, 100 + hl));
    // Non-zero padding in the last byte (bit 15 set).
    let mut p = header(dense_u32(5, 2, 3));
    p.extend_from_slice(&[0xd1, 0xd8]);
    assert_eq!(err(&p), (ErrorKind::NonZeroPadding, 100 + hl + 1));
    // Width 33 for UINT32.
    let mut p = header(dense_u32(1, 5, 33));
    p.extend_from_slice(&[0; 5]);
    assert_eq!(err(&p).0, ErrorKind::InvalidBitWidth);
    // Negative width.
    let p = header(dense_u32(0, 0, -1));
    assert_eq!(err(&p).0, ErrorKind::InvalidBitWidth);
    // BOOLEAN must have width exactly 1.
    let p = header(H {
        array: 8,
        vt: 0,
        ..dense_u32(0, 0, 0)
    });
    assert_eq!(err(&p).0, ErrorKind::InvalidBitWidth);
    // Negative num_values.
    let p = header(dense_u32(-1, 0, 3));
    assert_eq!(err(&p).0, ErrorKind::InvalidLength);
    // Encoding header member disagrees with encoding.
    let p = header(H {
        enc: 1,
        ..dense_u32(0, 0, 3)
    });
    assert_eq!(err(&p).0, ErrorKind::Mismatch);
    // num_present > num_values.
    let mut p = header(H {
        enc: 1,
        eh: (2, 3, 1, 1),
        ..dense_u32(2, 1, 0)
    });
    p.push(0);
    assert_eq!(err(&p).0, ErrorKind::InvalidLength);
    // num_values == 0 with num_present > 0 is the same rule.
    let mut p = header(H {
        enc: 1,
        eh: (2, 1, 1, 1),
        ..dense_u32(0, 1, 0)
    });
    p.push(0);
    assert_eq!(err(&p).0, ErrorKind::InvalidLength);
    // Ordinals on a FILE page.
    let p = header(H {
        ords: Some((0, 0)),
        ..dense_u32(0, 0, 0)
    });
    assert_eq!(err(&p).0, ErrorKind::Mismatch);
    // COLUMN_CHUNK page without ordinals.
    let p = header(H {
        scope: 1,
        ..dense_u32(0, 0, 0)
    });
    assert_eq!(err(&p).0, ErrorKind::ThriftMissingField);
    // Unknown enum value.
    let p = header(H {
        array: 99,
        ..dense_u32(0, 0, 0)
    });
    assert_eq!(err(&p).0, ErrorKind::InvalidValue);
    // Byte array: first offset not 0.
    let mut p = header(H {
        module: 2,
        array: 21,
        vt: 3,
        nv: 1,
        pl: 2,
        eh: (1, 2, 0, 0),
        ..dense_u32(0, 0, 0)
    });
    p.extend_from_slice(&pack(&[1, 1], 2));
    p.push(b'x');
    assert_eq!(err(&p).0, ErrorKind::InvalidValue);
    // Byte array: offsets decreasing is found by validate (and by access).
    let mut p = header(H {
        module: 2,
        array: 21,
        vt: 3,
        nv: 2,
        pl: 3,
        eh: (1, 2, 0, 0),
        ..dense_u32(0, 0, 0)
    });
    p.extend_from_slice(&pack(&[0, 3, 2], 2));
    p.extend_from_slice(b"xy");
    let v = ArrayPage::parse(&p, 0).unwrap();
    assert_eq!(v.validate().unwrap_err().kind, ErrorKind::NotSorted);
    assert_eq!(v.get_bytes(1).unwrap_err().kind, ErrorKind::NotSorted);
    // Sparse positions not strictly increasing.
    let mut p = header(H {
        module: 3,
        array: 41,
        enc: 1,
        nv: 10,
        pl: 2,
        eh: (2, 2, 4, 3),
        ..dense_u32(0, 0, 0)
    });
    p.extend_from_slice(&pack(&[7, 2], 4));
    p.extend_from_slice(&pack(&[5, 0], 3));
    let v = ArrayPage::parse(&p, 0).unwrap();
    assert_eq!(v.validate().unwrap_err().kind, ErrorKind::NotSorted);
    // Sparse position >= num_values.
    let mut p = header(H {
        module: 3,
        array: 41,
        enc: 1,
        nv: 5,
        pl: 2,
        eh: (2, 2, 4, 3),
        ..dense_u32(0, 0, 0)
    });
    p.extend_from_slice(&pack(&[2, 9], 4));
    p.extend_from_slice(&pack(&[5, 0], 3));
    let v = ArrayPage::parse(&p, 0).unwrap();
    assert_eq!(v.validate().unwrap_err().kind, ErrorKind::OutOfBounds);
    // UINT64 above i64::MAX.
    let mut p = header(H {
        array: 0,
        vt: 2,
        nv: 1,
        pl: 8,
        eh: (1, 64, 0, 0),
        ..dense_u32(0, 0, 0)
    });
    p.extend_from_slice(&u64::MAX.to_le_bytes());
    let v = ArrayPage::parse(&p, 0).unwrap();
    assert_eq!(v.get(0).unwrap_err().kind, ErrorKind::OutOfBounds);
    assert_eq!(v.validate().unwrap_err().kind, ErrorKind::OutOfBounds);
    // CODEC above 7.
    let mut p = header(dense_u32(1, 1, 4));
    p.push(8);
    let v = ArrayPage::parse(&p, 0).unwrap();
    assert_eq!(v.validate().unwrap_err().kind, ErrorKind::InvalidValue);
}

#[test]
fn sparse_lookup_matches_naive_model() {
    let mut seed = 0x9e3779b97f4a7c15u64;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for n in [0usize, 1, 2, 17, 100, 1000] {
        let vals: Vec<Option<u64>> = (0..n)
            .map(|_| {
                if rnd() % 3 == 0 {
                    Some(rnd() % 1000)
                } else {
                    None
                }
            })
            .collect();
        let page = encode_page(
            Module::RowGroupStats,
            MetadataArray::NullCount,
            &Values::Ints(&vals),
            None,
            false,
        )
        .unwrap();
        let v = ArrayPage::parse(&page, 0).unwrap();
        v.validate().unwrap();
        for (i, want) in vals.iter().enumerate() {
            assert_eq!(v.get(i).unwrap(), *want);
        }
        assert_eq!(v.get(n).unwrap_err().kind, ErrorKind::OutOfBounds);
    }
}

#[test]
fn mutated_pages_never_panic() {
    let vals = [Some(&b"ab"[..]), None, Some(b"xyz"), Some(b"")];
    let page = encode_page(
        Module::RowGroupStats,
        MetadataArray::MinValue,
        &Values::Bytes(&vals),
        None,
        false,
    )
    .unwrap();
    for i in 0..page.len() {
        for flip in [1u8, 0x10, 0x80, 0xff] {
            let mut m = page.clone();
            m[i] ^= flip;
            if let Ok(v) = ArrayPage::parse(&m, 0) {
                let _ = v.validate();
                for j in 0..v.len() + 1 {
                    let _ = v.get_bytes(j);
                    let _ = v.get(j);
                }
            }
        }
        assert!(ArrayPage::parse(&page[..i], 0).is_err());
    }
}
