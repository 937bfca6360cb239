mod agent;
mod engine;
mod recorder;
mod retries;
mod rewind;
mod switching;
mod thinking;
mod tools_runner;
