mod agent;
mod engine;
mod retries;
mod rewind;
mod thinking;
mod tools_runner;
