//! Parquet modular footers: the converter (feature `parquet`), metadata pages, the Thrift
//! compact codec against an independent encoder, and the footer view.

#[cfg(feature = "arrow")]
mod arrow;
mod convert;
mod crypt;
mod lossless;
mod pages;
mod size;
mod thrift;
mod view;
