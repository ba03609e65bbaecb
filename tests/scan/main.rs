//! Scan planning (feature `std`): on the real warehouse tables against an independent full
//! read, and on a generated many-manifest table against the generator's model.

mod generated;
mod warehouse;
