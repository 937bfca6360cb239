mod agent;
mod engine;
mod tools_runner;
mod thinking;
