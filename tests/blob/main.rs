//! Paimon BLOB files: golden vectors, real files against their oracles, the fallback merge
//! against a naive model, and validation (one test per error kind, mutations).

#[cfg(feature = "paimon")]
mod deletion;
#[cfg(all(feature = "paimon", feature = "arrow"))]
mod descriptor;
mod golden;
mod merge;
mod real;
#[cfg(feature = "paimon")]
mod table;
mod validation;

/// A fresh copy of the table (directory tree) `from` under this test binary's temporary
/// directory, at `<group>/<tag>`, for a test to damage.
#[cfg(feature = "paimon")]
fn scratch_table(from: &std::path::Path, group: &str, tag: &str) -> std::path::PathBuf {
    fn copy(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let target = to.join(e.file_name());
            if e.path().is_dir() {
                copy(&e.path(), &target);
            } else {
                std::fs::copy(e.path(), target).unwrap();
            }
        }
    }
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(tag);
    let _ = std::fs::remove_dir_all(&dir);
    copy(from, &dir);
    dir
}
