mod agent;
mod engine;
mod retries;
mod rewind;
mod switching;
mod thinking;
mod tools_runner;
