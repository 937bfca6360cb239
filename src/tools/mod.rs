//! Tools from the config file: specs, argument validation, the process runner. To be written.
