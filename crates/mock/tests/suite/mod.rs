mod k3;
mod mock_server;
mod server_bugs;
