//! What kimi-tui does, without a screen: the agent loop (`engine`), the tools declared in the
//! config and how they run (`tools`), the rules on calling them (`tools::rules`) and which
//! project directories may add rules that allow (`trust`), the config file (`config`), saved
//! sessions (`session`), and the file helpers they share.

pub mod backend;
pub mod config;
pub mod engine;
pub mod json_out;
pub mod logging;
pub mod private_fs;
pub mod redactor;
pub mod session;
pub mod tools;
pub mod trust;
