//! The BinaryRow view on rows laid out by hand per Paimon's format (the independent oracle).
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use lakecore::sidecar::BinaryRow;
use lakecore::ErrorKind;

/// Lays out a row by hand: arity prefix, null bits (+ row kind byte), 8-byte slots, var part.
struct RowWriter {
    arity: usize,
    nulls: Vec<u8>,
    slots: Vec<[u8; 8]>,
    var: Vec<u8>,
}

impl RowWriter {
    fn new(arity: usize) -> Self {
        let null_len = (arity + 63 + 8) / 64 * 8;
        RowWriter {
            arity,
            nulls: vec![0; null_len],
            slots: vec![[0; 8]; arity],
            var: Vec::new(),
        }
    }
    fn fixed(&mut self, i: usize, le: &[u8]) {
        self.slots[i][..le.len()].copy_from_slice(le);
    }
    fn null(&mut self, i: usize) {
        let bit = i + 8;
        self.nulls[bit / 8] |= 1 << (bit % 8);
    }
    fn bytes(&mut self, i: usize, b: &[u8]) {
        if b.len() <= 7 {
            self.slots[i][..b.len()].copy_from_slice(b);
            self.slots[i][7] = 0x80 | b.len() as u8;
        } else {
            let offset = self.nulls.len() + 8 * self.arity + self.var.len();
            let v = ((offset as u64) << 32) | b.len() as u64;
            self.slots[i] = v.to_le_bytes();
            self.var.extend_from_slice(b);
            while !self.var.len().is_multiple_of(8) {
                self.var.push(0);
            }
        }
    }
    fn finish(&self) -> Vec<u8> {
        let mut out = (self.arity as i32).to_be_bytes().to_vec();
        out.extend_from_slice(&self.nulls);
        for s in &self.slots {
            out.extend_from_slice(s);
        }
        out.extend_from_slice(&self.var);
        out
    }
}

#[test]
fn typed_getters_read_every_partition_key_type() {
    let mut w = RowWriter::new(13);
    w.fixed(0, &[1]);
    w.fixed(1, &(-5i8).to_le_bytes());
    w.fixed(2, &(-300i16).to_le_bytes());
    w.fixed(3, &(-70000i32).to_le_bytes());
    w.fixed(4, &(-(1i64 << 40)).to_le_bytes());
    w.fixed(5, &1.5f32.to_le_bytes());
    w.fixed(6, &(-2.25f64).to_le_bytes());
    w.fixed(7, &19_800i32.to_le_bytes()); // DATE: days since epoch
    w.bytes(8, "a longer string value".as_bytes());
    w.bytes(9, &[0, 1, 2]);
    w.fixed(10, &12345i64.to_le_bytes()); // DECIMAL(10, 2) 123.45 unscaled
    w.null(11);
    w.bytes(12, "".as_bytes());
    let bytes = w.finish();
    let r = BinaryRow::from_partition(&bytes, 100).unwrap();
    assert_eq!(r.arity(), 13);
    assert_eq!(r.row_kind(), 0);
    assert_eq!(r.get_bool(0).unwrap(), Some(true));
    assert_eq!(r.get_i8(1).unwrap(), Some(-5));
    assert_eq!(r.get_i16(2).unwrap(), Some(-300));
    assert_eq!(r.get_i32(3).unwrap(), Some(-70000));
    assert_eq!(r.get_i64(4).unwrap(), Some(-(1 << 40)));
    assert_eq!(r.get_f32(5).unwrap(), Some(1.5));
    assert_eq!(r.get_f64(6).unwrap(), Some(-2.25));
    assert_eq!(r.get_date(7).unwrap(), Some(19_800));
    assert_eq!(r.get_str(8).unwrap(), Some("a longer string value"));
    assert_eq!(r.get_bytes(9).unwrap(), Some(&[0u8, 1, 2][..]));
    assert_eq!(r.get_decimal_compact(10).unwrap(), Some(12345));
    assert!(r.is_null(11).unwrap());
    assert_eq!(r.get_i64(11).unwrap(), None);
    assert_eq!(r.get_str(11).unwrap(), None);
    assert_eq!(r.get_str(12).unwrap(), Some(""));
    assert!((0..11).all(|i| !r.is_null(i).unwrap()));
    assert_eq!(r.get_i32(13).unwrap_err().kind, ErrorKind::OutOfBounds);
}

#[test]
fn wide_rows_use_more_null_words() {
    // 60 fields: 60 + 8 null bits need two 8-byte words.
    let mut w = RowWriter::new(60);
    w.null(59);
    w.fixed(58, &7i32.to_le_bytes());
    let bytes = w.finish();
    let r = BinaryRow::from_partition(&bytes, 0).unwrap();
    assert!(r.is_null(59).unwrap());
    assert_eq!(r.get_i32(58).unwrap(), Some(7));
}

#[test]
fn malformed_rows_are_errors_not_panics() {
    let mut w = RowWriter::new(2);
    w.bytes(0, "more than seven".as_bytes());
    w.bytes(1, &[0xff, 0xfe]);
    let good = w.finish();
    let r = BinaryRow::from_partition(&good, 0).unwrap();
    assert_eq!(
        r.get_str(1).unwrap_err().kind,
        ErrorKind::InvalidValue,
        "not UTF-8"
    );
    // Negative arity, short rows.
    let mut neg = good.clone();
    neg[0] = 0x80;
    assert_eq!(
        BinaryRow::from_partition(&neg, 0).unwrap_err().kind,
        ErrorKind::InvalidValue
    );
    assert_eq!(
        BinaryRow::from_partition(&good[..20], 0).unwrap_err().kind,
        ErrorKind::Truncated
    );
    // A variable-part reference beyond the row.
    let mut far = good.clone();
    far[4 + 8 + 4] = 0xff; // offset high byte region of slot 0 (bytes 4..8 of the slot)
    let r = BinaryRow::from_partition(&far, 0).unwrap();
    assert_eq!(r.get_bytes(0).unwrap_err().kind, ErrorKind::OutOfBounds);
    // Every truncation and byte flip: never a panic.
    for n in 0..good.len() {
        if let Ok(r) = BinaryRow::from_partition(&good[..n], 0) {
            for i in 0..3 {
                let _ = (r.get_bytes(i), r.get_str(i), r.get_i64(i), r.is_null(i));
            }
        }
    }
    for i in 0..good.len() {
        for v in [0u8, 0x7f, 0x80, 0xff] {
            let mut m = good.clone();
            m[i] = v;
            if let Ok(r) = BinaryRow::from_partition(&m, 0) {
                for f in 0..r.arity().min(4) {
                    let _ = (r.get_bytes(f), r.get_str(f), r.get_f64(f), r.is_null(f));
                }
            }
        }
    }
}
