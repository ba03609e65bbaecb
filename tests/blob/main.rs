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
