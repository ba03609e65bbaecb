//! Manifest sidecars: golden vectors, real files of the Paimon clients, mutations, round trips
//! against a brute-force oracle, BinaryRow, building from Avro manifests, and I/O.

mod avro;
mod binary_row;
mod golden;
mod io;
mod mutation;
mod real;
mod roundtrip;
