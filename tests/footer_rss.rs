//! The peak RSS of `lakecore footer inspect` on sparse 1 GiB and 4 GiB files: a test binary of
//! its own, so that the test process stays small. A spawned child's peak RSS as `wait4`
//! reports it starts from its parent's at the `exec` (Linux carries the old address space's
//! high-water mark over), so beside the other CLI tests, whose files and outputs grow the
//! shared test process, it measured the test process (208 MB once), not the command.
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
#![cfg(target_os = "linux")]

use std::path::PathBuf;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lakecore"))
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lakecore-footer-rss-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A file of `size` bytes that is a hole except for `PAR1` and a modular footer of 50
/// columns x 4 row groups (chunks spread over the hole) at its end; returns the peak RSS
/// (KiB) and wall time of `footer inspect` on it. (The child is reaped by `wait4`, which
/// clippy's `zombie_processes` does not see.)
#[allow(clippy::zombie_processes)]
fn inspect_sparse(size: usize) -> (i64, std::time::Duration) {
    use lakecore::footer::{ChunkMeta, FooterInput};
    use std::io::{Seek, SeekFrom, Write};
    let names: Vec<String> = (0..50).map(|i| format!("c{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut input = FooterInput::flat(&names, &[2; 50], &[1000; 4]);
    let chunk = (size - 4) as u64 / 200;
    for (k, c) in input.chunks.iter_mut().enumerate() {
        *c = ChunkMeta {
            data_page_offset: 4 + k as u64 * chunk,
            total_compressed_size: chunk,
            total_uncompressed_size: chunk,
            num_values: 1000,
            ..ChunkMeta::default()
        };
    }
    // Zeroed (calloc'd, never touched) pages: the footer is appended after them.
    let mut bytes = vec![0u8; size];
    input.write(&mut bytes).unwrap();
    let path = tmp(&format!("sparse-{size}.parquet"));
    let mut f = std::fs::File::create(&path).unwrap();
    f.set_len(bytes.len() as u64).unwrap();
    f.write_all(b"PAR1").unwrap();
    f.seek(SeekFrom::Start(size as u64)).unwrap();
    f.write_all(&bytes[size..]).unwrap();
    drop(f);
    drop(bytes);
    let t = std::time::Instant::now();
    let child = bin()
        .args(["footer", "inspect"])
        .arg(&path)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (code, max_rss_kb) = wait_with_rusage(child.id() as i32);
    let elapsed = t.elapsed();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(code, 0);
    (max_rss_kb, elapsed)
}

/// `footer inspect` maps the file and touches only its tail: peak RSS under 50 MB on a
/// 1 GB file, and the same (within 4 MB) on a 4 GB one. The times are printed, not checked.
#[test]
fn inspect_of_a_sparse_1gb_file_stays_under_50mb_rss() {
    let (rss_1g, t_1g) = inspect_sparse(1 << 30);
    let (rss_4g, t_4g) = inspect_sparse(4 << 30);
    eprintln!(
        "footer inspect: 1 GiB: {rss_1g} KiB peak RSS, {t_1g:?}; 4 GiB: {rss_4g} KiB, {t_4g:?}"
    );
    assert!(rss_1g > 0 && rss_1g < 50 * 1024, "peak RSS {rss_1g} KiB");
    assert!(
        (rss_4g - rss_1g).abs() < 4 * 1024,
        "1 GiB: {rss_1g} KiB, 4 GiB: {rss_4g} KiB"
    );
}

/// Waits for `pid` and returns its exit code and peak RSS (KiB) from `wait4`'s rusage.
#[allow(unsafe_code)]
fn wait_with_rusage(pid: i32) -> (i32, i64) {
    let mut status = 0i32;
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are to live locals of the right types; `pid` is our child,
    // which `Command` has not reaped (we never called `wait` on it).
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid);
    (libc::WEXITSTATUS(status), usage.ru_maxrss)
}
