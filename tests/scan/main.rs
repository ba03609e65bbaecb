//! Scan planning (feature `std`): on the real warehouse tables against an independent full
//! read, on pypaimon's tables of every manifest codec against pypaimon's own plans, and on a
//! generated many-manifest table against the generator's model.

mod codecs;
mod generated;
mod warehouse;
