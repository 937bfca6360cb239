mod agent;
mod engine;
mod thinking;
mod tools_runner;
