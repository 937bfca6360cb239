mod agent;
mod engine;
mod retries;
mod thinking;
mod tools_runner;
