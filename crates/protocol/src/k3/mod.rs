//! Kimi K3: the XTML completion format.

pub mod parser;

pub use parser::K3Parser;
