//! Loaders for `tests/data/` (described in `tests/data/README.md`): golden vectors, real files
//! written by the Apache Paimon clients, and the JSON oracles beside them.

use std::path::{Path, PathBuf};

/// The lakecore repository root (the testkit lives in its `testkit/` folder).
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the testkit is a folder of the lakecore repository")
}

/// `tests/data/`.
pub fn data_dir() -> PathBuf {
    root().join("tests/data")
}

/// The path of `rel` under `tests/data/`, as text.
pub fn data(rel: &str) -> String {
    format!("{}/{rel}", data_dir().display())
}

/// The bytes of the hex golden file `tests/data/golden/{name}` (whitespace ignored).
pub fn golden(name: &str) -> Vec<u8> {
    crate::hex::unhex(&std::fs::read_to_string(data(&format!("golden/{name}"))).unwrap())
}

/// The BLOB golden vectors document, `tests/data/golden/blob.md`.
const BLOB_MD: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/data/golden/blob.md"
));

/// The bytes of BLOB golden vector `label` (G1-G5, D1-D4) of `tests/data/golden/blob.md`:
/// the last back-quoted hex run of its list item.
pub fn blob_vector(label: &str) -> Vec<u8> {
    let start = BLOB_MD
        .find(&format!("\n- {label} "))
        .unwrap_or_else(|| panic!("no vector {label}"));
    let rest = &BLOB_MD[start + 1..];
    let end = rest[1..].find("\n- ").map_or(rest.len(), |e| e + 1);
    let item = &rest[..end];
    let hex = item
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit()))
        .last()
        .unwrap();
    crate::hex::unhex(hex)
}

/// Every real `.blob` file under `tests/data/paimon/` that has a per-file oracle, sorted (the
/// tables of `blob_warehouse/` and `dv_warehouse/` have a table-level oracle, pypaimon's read,
/// instead).
pub fn blob_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path
                    .file_name()
                    .is_some_and(|n| n == "blob_warehouse" || n == "dv_warehouse")
                {
                    continue;
                }
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "blob") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&data_dir().join("paimon"), &mut out);
    out.sort();
    out
}

/// The JSON oracle of a real file: `{path}.oracle.json`.
pub fn oracle(path: &Path) -> serde_json::Value {
    let mut name = path.as_os_str().to_owned();
    name.push(".oracle.json");
    serde_json::from_slice(&std::fs::read(name).unwrap()).unwrap()
}
