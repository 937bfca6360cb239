mod k3;
mod mock_server;
