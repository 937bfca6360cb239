mod engine;
mod tools_runner;
