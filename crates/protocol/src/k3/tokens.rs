//! K3's structural token strings. They reuse K2's ids 163586-163589 for other strings, so an id
//! is named by the model's family, never by K2's names.

pub const OPEN: &str = "<|open|>";
pub const CLOSE: &str = "<|close|>";
pub const SEP: &str = "<|sep|>";
pub const END_OF_MSG: &str = "<|end_of_msg|>";
/// `tokenizer_config.json`'s end token; servers may stop on it instead of `<|end_of_msg|>`.
pub const EOS: &str = "[EOS]";

/// The four strings the encoder writes as structure.
pub const STRUCTURAL: [&str; 4] = [OPEN, CLOSE, SEP, END_OF_MSG];
