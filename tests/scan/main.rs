//! Scan planning (feature `std`): on the real warehouse tables against an independent full
//! read, on pypaimon's tables of every manifest codec against pypaimon's own plans, and on a
//! generated many-manifest table against the generator's model. The Avro decoder under it
//! against `apache-avro`: on every real manifest and list, on generated files of every Avro
//! type, and on hostile schemas and data.

mod avro_generated;
mod avro_hostile;
mod avro_oracle;
mod avro_program;
mod codecs;
mod concurrency;
mod generated;
#[cfg(feature = "object-store")]
mod remote;
mod warehouse;
