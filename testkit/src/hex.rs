//! Lowercase hex text, as the golden files and the CLI's JSON use it.

/// Lowercase hex of `bytes`, two digits per byte, no separators.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of hex text; whitespace (line breaks, spaces between groups) is ignored.
///
/// # Panics
///
/// On a non-hex digit or an odd number of digits.
pub fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}
