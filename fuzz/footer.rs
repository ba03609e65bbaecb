#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(feature = "alloc")]
//! Fuzz harness for metadata pages and the footer view: arbitrary windows and pages never
//! panic; generated footers read back equal to their input; mutated footers never panic.

use lakecore::footer::ArrayPage;
use lakecore::footer::{FooterOptions, ModularFooter};
use lakecore_testkit::footer::{build, check_against_input, random_input};

fn iterations(n: usize) -> usize {
    if cfg!(miri) {
        2
    } else {
        n
    }
}

fn exercise(file: &[u8], origin: u64) {
    let Ok(f) = ModularFooter::parse_with(
        file,
        &FooterOptions {
            origin,
            ..FooterOptions::default()
        },
    ) else {
        return;
    };
    let _ = f.validate();
    for c in 0..f.num_columns().min(8) {
        for g in 0..f.num_row_groups().min(8) {
            let _ = f.chunk_placement(c, g);
            let _ = f.chunk_statistics(c, g);
            let _ = f.offset_index(c, g);
            let _ = f.column_index(c, g);
        }
    }
    if let Ok(s) = f.schema() {
        let _ = s.leaves().count();
    }
    let _ = f.file_metadata();
}

#[test]
fn arbitrary_pages_and_windows_never_panic() {
    bolero::check!()
        .with_iterations(iterations(3000))
        .for_each(|bytes: &[u8]| {
            if let Ok(p) = ArrayPage::parse(bytes, 7) {
                let _ = p.validate();
                for i in 0..p.len().min(64) + 1 {
                    let _ = p.get(i);
                    let _ = p.get_bytes(i);
                }
                // A chunk's window of the page (page-index slices): bounds from the input.
                let n = p.len();
                let a = bytes.first().map_or(0, |&b| usize::from(b)) % (n + 1);
                let len = bytes.get(1).map_or(0, |&b| usize::from(b)) % (n - a + 1);
                let w = p.window(a, len).unwrap();
                let _ = w.validate();
                let _ = w.num_present();
                let _ = w.window_values().count();
                for i in 0..len.min(64) + 1 {
                    let _ = w.get(i);
                    let _ = w.get_bytes(i);
                    let _ = w.get_dense(i);
                }
                assert!(p.window(a, n - a + 1).is_err());
            }
            let mut file = bytes.to_vec();
            file.extend_from_slice(&(bytes.len() as u32 / 2).to_le_bytes());
            file.extend_from_slice(b"PARM");
            exercise(&file, 0);
            exercise(bytes, 3);
        });
}

#[test]
fn generated_footers_round_trip_and_mutations_never_panic() {
    bolero::check!()
        .with_type::<(u64, u8, u8, Vec<(u16, u8)>)>()
        .with_iterations(iterations(300))
        .for_each(|(seed, c, g, flips)| {
            let (input, data_len) = random_input(*seed, u32::from(*c % 9), u32::from(*g % 6));
            let file = build(&input, data_len);
            let f = ModularFooter::parse(&file).unwrap();
            check_against_input(&f, &input);
            let meta = file.len() - data_len;
            let mut m = file.clone();
            for &(at, x) in flips {
                let i = data_len + usize::from(at) % meta;
                m[i] ^= x;
            }
            exercise(&m, 0);
        });
}
