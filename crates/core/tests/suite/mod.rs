mod agent;
mod engine;
mod rewind;
mod thinking;
mod tools_runner;
