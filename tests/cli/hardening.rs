#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]
//! What every subcommand shares: a closed stdout ends quietly, the exit statuses (0 ok, 1 I/O,
//! 2 invalid data, 3 usage), errors that say what a file is and which command reads it, and
//! output files written atomically and never over an input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const TABLE: &str = "tests/data/paimon/warehouse/sc.db/codec_snappy_rs";
const MANIFEST: &str = "tests/data/paimon/warehouse/sc.db/codec_snappy_rs/manifest/manifest-7cfc433b-123d-43f6-aa43-4deccc307082-0";
const PARQUET: &str = "tests/data/paimon/warehouse/blob.db/py_blob/bucket-0/data-3d67ab7e-159e-4711-ab99-7cd8401a2bfb-0.parquet";
const BLOB: &str = "tests/data/paimon/warehouse/blob.db/py_blob/bucket-0/data-0733c150-b4d5-4226-b708-f8d72f384b47-0.blob";

fn lakecore(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lakecore"))
        .args(args)
        .output()
        .unwrap()
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lakecore-hardening-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs `lakecore args` with stdout a pipe whose reader is closed before the process starts,
/// so its first write fails with EPIPE.
fn closed_stdout(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_lakecore"))
        .args(args)
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_closed_stdout_ends_quietly_with_status_0() {
    let d = dir("pipe");
    let modular = d.join("modular.parquet");
    assert!(lakecore(&["footer", "convert", PARQUET, "-o", s(&modular)])
        .status
        .success());
    let sidecar = format!("{MANIFEST}.avro.sidecar");
    let out_sidecar = d.join("built.sidecar");
    let out_parquet = d.join("again.parquet");
    let cases: Vec<Vec<&str>> = vec![
        vec!["scan", TABLE],
        vec!["scan", TABLE, "--json"],
        vec!["sidecar", "inspect", &sidecar],
        vec!["sidecar", "inspect", &sidecar, "--json"],
        vec!["sidecar", "build", MANIFEST, "-o", s(&out_sidecar)],
        vec!["footer", "inspect", s(&modular)],
        vec!["footer", "placement", s(&modular), "--column", "0"],
        vec!["footer", "convert", PARQUET, "-o", s(&out_parquet)],
        vec!["blob", "inspect", BLOB],
        vec!["demo", "--values", "1000", "--manifests", "2"],
    ];
    for args in &cases {
        let out = closed_stdout(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
        assert!(out.stderr.is_empty(), "{args:?}: {out:?}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn usage_errors_exit_3_and_help_documents_the_statuses() {
    for args in [
        vec!["sidecar", "inspect"],
        vec!["scan", TABLE, "--no-such-flag"],
        vec!["nonsense"],
        vec!["sidecar", "build", MANIFEST, "--layout", "round", "-o", "x"],
    ] {
        let out = lakecore(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {out:?}");
        assert!(out.stdout.is_empty());
    }
    let help = lakecore(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    let text = String::from_utf8(help.stdout).unwrap();
    assert!(
        text.contains("0 success") && text.contains("1 I/O error"),
        "{text}"
    );
    assert!(
        text.contains("2 invalid input data") && text.contains("3 usage error"),
        "{text}"
    );
    assert_eq!(lakecore(&["--version"]).status.code(), Some(0));
    // A missing file is an I/O error.
    assert_eq!(
        lakecore(&["footer", "inspect", "/nonexistent/x.parquet"])
            .status
            .code(),
        Some(1)
    );
}

/// One stderr line naming the file, the error and its offset, what the bytes look like and
/// the command that takes such a file.
fn wrong_file(args: &[&str], file: &str, looks_like: &str, command: &str) {
    let out = lakecore(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("error: {file}: invalid input: ")),
        "{err}"
    );
    assert!(err.contains(" at byte "), "{err}");
    assert!(
        err.contains(&format!("the bytes look like {looks_like}")),
        "{err}"
    );
    assert!(err.contains(command), "{err}");
}

#[test]
fn errors_say_what_the_file_is_and_which_command_reads_it() {
    let d = dir("errors");
    let modular = d.join("modular.parquet");
    assert!(lakecore(&["footer", "convert", PARQUET, "-o", s(&modular)])
        .status
        .success());
    let sidecar = format!("{MANIFEST}.avro.sidecar");
    wrong_file(
        &["footer", "inspect", PARQUET],
        PARQUET,
        "a standard Parquet file",
        &format!("convert it with `lakecore footer convert {PARQUET} -o "),
    );
    wrong_file(
        &["footer", "convert", s(&modular), "-o", s(&d.join("x"))],
        s(&modular),
        "a Parquet file with a modular footer",
        &format!("`lakecore footer inspect {}`", s(&modular)),
    );
    wrong_file(
        &["sidecar", "inspect", MANIFEST],
        MANIFEST,
        "an Avro container",
        &format!("`lakecore sidecar build {MANIFEST} -o "),
    );
    wrong_file(
        &["sidecar", "build", &sidecar, "-o", s(&d.join("y"))],
        &sidecar,
        "a Paimon manifest sidecar",
        &format!("`lakecore sidecar inspect {sidecar}`"),
    );
    wrong_file(
        &["footer", "inspect", BLOB],
        BLOB,
        "a Paimon BLOB file",
        &format!("`lakecore blob inspect {BLOB}`"),
    );
    wrong_file(
        &["blob", "inspect", PARQUET],
        PARQUET,
        "a standard Parquet file",
        "lakecore footer convert",
    );
    let snapshot = format!("{TABLE}/snapshot/snapshot-1");
    wrong_file(
        &["sidecar", "inspect", &snapshot],
        &snapshot,
        "JSON",
        "`lakecore scan TABLE_DIR`",
    );
    // The right kind of file, broken: the format is named, no other command suggested.
    let cut = d.join("cut.parquet");
    let bytes = std::fs::read(&modular).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() - 8]).unwrap();
    let out = lakecore(&["footer", "inspect", s(&cut)]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("the bytes look like no format lakecore knows"),
        "{err}"
    );
    assert!(!err.contains("lakecore footer"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

fn entries(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

#[test]
fn outputs_are_atomic_and_never_an_input() {
    let d = dir("atomic");
    let input = d.join("in.parquet");
    let original = std::fs::read(PARQUET).unwrap();
    std::fs::write(&input, &original).unwrap();
    let manifest = d.join("manifest-0");
    let manifest_bytes = std::fs::read(MANIFEST).unwrap();
    std::fs::write(&manifest, &manifest_bytes).unwrap();

    // The output is the input: by the same path, another spelling, or a hard link (the same
    // inode). Refused as a usage error before anything is written.
    std::fs::hard_link(&input, d.join("link.parquet")).unwrap();
    let dotted = d.join(".").join("in.parquet");
    for out in [input.clone(), dotted, d.join("link.parquet")] {
        let o = lakecore(&["footer", "convert", s(&input), "-o", s(&out)]);
        assert_eq!(o.status.code(), Some(3), "{out:?}: {o:?}");
        assert!(String::from_utf8(o.stderr)
            .unwrap()
            .contains("is the input"));
        assert_eq!(std::fs::read(&input).unwrap(), original);
    }
    let o = lakecore(&["sidecar", "build", s(&manifest), "-o", s(&manifest)]);
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    assert_eq!(std::fs::read(&manifest).unwrap(), manifest_bytes);
    assert_eq!(entries(&d), ["in.parquet", "link.parquet", "manifest-0"]);

    // A failed build leaves the previous output whole and no temporary file behind.
    let out = d.join("out.sidecar");
    std::fs::write(&out, b"previous").unwrap();
    let o = lakecore(&["sidecar", "build", s(&input), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert_eq!(std::fs::read(&out).unwrap(), b"previous");
    // An output directory that does not exist: an I/O error, nothing created.
    let o = lakecore(&["sidecar", "build", s(&manifest), "-o", s(&d.join("no/out"))]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert_eq!(
        entries(&d),
        ["in.parquet", "link.parquet", "manifest-0", "out.sidecar"]
    );

    // A successful one replaces it whole, through a temporary file that is gone afterwards.
    let o = lakecore(&["sidecar", "build", s(&manifest), "-o", s(&out)]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(format!("{MANIFEST}.avro.sidecar")).unwrap()
    );
    let converted = d.join("converted.parquet");
    assert!(
        lakecore(&["footer", "convert", s(&input), "-o", s(&converted)])
            .status
            .success()
    );
    assert_eq!(
        entries(&d),
        [
            "converted.parquet",
            "in.parquet",
            "link.parquet",
            "manifest-0",
            "out.sidecar"
        ]
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn completions_and_man_page_come_from_the_parser() {
    for shell in ["bash", "zsh", "fish"] {
        let out = lakecore(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        for sub in ["scan", "sidecar", "footer", "blob", "demo", "completions"] {
            assert!(text.contains(sub), "{shell} completions miss {sub}");
        }
        assert!(text.contains("partition"), "{shell}: flags too");
    }
    assert_eq!(lakecore(&["completions", "tcsh"]).status.code(), Some(3));
    let out = lakecore(&["man"]);
    assert!(out.status.success(), "{out:?}");
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(
        page.starts_with(".ie") || page.contains(".TH lakecore 1"),
        "{page}"
    );
    assert!(page.contains(".TH lakecore 1"));
    for sub in [
        "lakecore\\-scan",
        "lakecore\\-sidecar",
        "lakecore\\-footer",
        "lakecore\\-blob",
    ] {
        assert!(page.contains(sub), "man page misses {sub}");
    }
    assert!(page.contains("Exit status"), "the statuses are in the page");
}

#[test]
fn partition_values_can_be_quoted() {
    let t = "tests/data/paimon/warehouse/sc.db/part_append_rs";
    let run = |p: &str| {
        let out = lakecore(&["scan", t, "--partition", p, "--json"]);
        assert!(out.status.success(), "{p}: {out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["files"].as_array().unwrap().len()
    };
    let bare = run("dt=2024-01-02,hr=4");
    assert!(bare > 0);
    assert_eq!(run("dt='2024-01-02',hr='4'"), bare);
    // A comma inside quotes is part of the value (one condition that matches nothing), not
    // a separator.
    assert_eq!(run("dt='2024-01-02,hr=4'"), 0);
    let out = lakecore(&["scan", t, "--partition", "dt='a,b"]);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("unclosed quote at character 3"), "{err}");
    // The report prints partitions in the form --partition takes.
    let out = lakecore(&["scan", t, "--partition", "dt=2024-01-02,hr=4"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("[dt=2024-01-02, hr=4]"), "{text}");
}

#[test]
fn sidecar_select_finds_the_manifest_facts_itself() {
    let m = "tests/data/paimon/warehouse/sc.db/bucket4_rs/manifest/manifest-6cad7308-d3f7-4ac5-8249-b99d45dd3a6f-0";
    let side = format!("{m}.avro.sidecar");
    let select = |args: &[&str]| {
        let out = lakecore(&[&["sidecar", "select"], args, &["--rows", "0-0", "--json"]].concat());
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let explicit = select(&[&side, "--manifest-size", "16886", "--entries", "364"]);
    assert_eq!(
        select(&[&side]),
        explicit,
        "facts from the manifest beside it"
    );
    assert_eq!(select(&[m]), explicit, "the manifest names its sidecar");
    assert_eq!(select(&[m, "--entries", "364"]), explicit);
    // The flags override: a wrong count is checked against the sidecar.
    let out = lakecore(&["sidecar", "select", m, "--entries", "365"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8(out.stderr).unwrap().contains("mismatch"));
    // A sidecar alone, without flags: a usage error that says what to give.
    let d = dir("alone");
    let alone = d.join("m.avro.sidecar");
    std::fs::copy(&side, &alone).unwrap();
    let out = lakecore(&["sidecar", "select", s(&alone)]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("give --manifest-size and --entries"));
    // Named anything: a sidecar that is not `M.avro.sidecar` is still read with the flags.
    let other = d.join("m.sidecar");
    std::fs::copy(&side, &other).unwrap();
    let out = lakecore(&[
        "sidecar",
        "select",
        s(&other),
        "--manifest-size",
        "16886",
        "--entries",
        "364",
        "--rows",
        "0-0",
        "--json",
    ]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), explicit);
    std::fs::remove_dir_all(&d).unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// The test table with its INT partition key `hr` retyped (same BinaryRow slot): a DATE
/// holds day `hr`, a DECIMAL(10, 2) holds `hr` hundredths.
fn retyped(d: &Path, ty: &str) -> PathBuf {
    let t = d.join(ty.replace([' ', '(', ')', ','], "_"));
    copy_dir(
        Path::new("tests/data/paimon/warehouse/sc.db/part_append_rs"),
        &t,
    );
    for e in std::fs::read_dir(t.join("schema")).unwrap() {
        let path = e.unwrap().path();
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for f in v["fields"].as_array_mut().unwrap() {
            if f["name"] == "hr" {
                f["type"] = ty.into();
            }
        }
        std::fs::write(&path, v.to_string()).unwrap();
    }
    t
}

#[test]
fn dates_and_decimals_are_strict_and_printed_as_written() {
    let d = dir("typed");
    let date = retyped(&d, "DATE");
    let decimal = retyped(&d, "DECIMAL(10, 2)");
    let scan = |t: &Path, p: &str| lakecore(&["scan", s(t), "--partition", p]);
    // Day 4 is 1970-01-05: the report prints it in the form --partition takes, and that
    // form selects the same files.
    let out = scan(&date, "hr=1970-01-05");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("hr=1970-01-05]"), "{text}");
    assert!(!text.contains("day"), "{text}");
    let out = scan(&decimal, "hr=0.04");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("hr=0.04]"), "{text}");
    // Impossible days and excess digits are refused (usage), in words, not rolled over.
    for (t, value, words) in [
        (
            &date,
            "hr=1970-02-30",
            "not a valid DATE (YYYY-MM-DD, a day that exists)",
        ),
        (&date, "hr=1970-1-5", "not a valid DATE"),
        (&decimal, "hr=0.041", "not a valid DECIMAL of scale 2"),
    ] {
        let out = scan(t, value);
        assert_eq!(out.status.code(), Some(3), "{value}: {out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(words), "{value}: {err}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn sidecar_select_takes_partition_values_typed_by_the_schema() {
    let t = "tests/data/paimon/warehouse/sc.db/part_append_rs";
    let m = format!("{t}/manifest/manifest-17fe0b1d-9a8f-4770-8b25-6274f809f953-0");
    let side = format!("{m}.avro.sidecar");
    // The sidecar's two partitions: (dt=2024-01-02, hr=7) and (dt=2024-01-02, hr=8).
    let hex7 =
        "0000000200000000000000000a000000180000000700000000000000323032342d30312d3032000000000000";
    let select = |file: &str, extra: &[&str]| {
        let out = lakecore(&[&["sidecar", "select", file, "--json"], extra].concat());
        assert!(out.status.success(), "{extra:?}: {out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["blocks"].as_array().unwrap().len()
    };
    assert_eq!(select(&side, &["--partition", hex7]), 1);
    assert_eq!(select(&side, &["--partition", "dt=2024-01-02,hr=7"]), 1);
    assert_eq!(select(&side, &["--partition", "hr='8'"]), 1);
    assert_eq!(select(&side, &["--partition", "dt=2024-01-02,hr=9"]), 0);
    assert_eq!(select(&side, &["--partition", "dt='2024-01-02,hr=7'"]), 0);
    // --where: scan's filter grammar on partition keys, ANDed with --partition, evaluated per
    // dictionary tuple (the sidecar's one block holds both partitions).
    assert_eq!(select(&side, &[]), 1);
    assert_eq!(select(&side, &["--where", "hr = 7"]), 1);
    assert_eq!(
        select(&side, &["--where", "hr >= 8 AND dt = '2024-01-02'"]),
        1
    );
    assert_eq!(select(&side, &["--where", "hr > 8"]), 0);
    assert_eq!(select(&side, &["--where", "hr IN (1, 2)"]), 0);
    assert_eq!(select(&side, &["--where", "hr = 9 OR dt = 2024-01-02"]), 1);
    assert_eq!(select(&side, &["--where", "dt < '2024-01-02'"]), 0);
    assert_eq!(select(&side, &["--where", "hr IS NULL"]), 0);
    assert_eq!(select(&side, &["--where", "hr = 7 AND hr = 8"]), 0);
    assert_eq!(
        select(&side, &["--where", "hr = 7", "--partition", "hr=8"]),
        0
    );
    for (w, says) in [
        ("v = 1", "not a partition key"),
        ("hr = x", "not a valid INT"),
        ("hr = ", "bad --where"),
    ] {
        let out = lakecore(&["sidecar", "select", &side, "--where", w]);
        assert_eq!(out.status.code(), Some(3), "{w}: {out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(says), "{w}: {err}");
    }
    for (p, says) in [
        ("hr=x", "not a valid INT"),
        ("nope=1", "not a partition key"),
    ] {
        let out = lakecore(&["sidecar", "select", &side, "--partition", p]);
        assert_eq!(out.status.code(), Some(3), "{p}: {out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(says), "{p}: {err}");
    }
    // Outside its table the schema comes from --table.
    let d = dir("schema");
    let copy = d.join("m");
    std::fs::copy(&m, &copy).unwrap();
    std::fs::copy(&side, d.join("m.avro.sidecar")).unwrap();
    let out = lakecore(&["sidecar", "select", s(&copy), "--partition", "hr=7"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("--table DIR"));
    assert_eq!(select(s(&copy), &["--partition", "hr=7", "--table", t]), 1);
    std::fs::remove_dir_all(&d).unwrap();
}
