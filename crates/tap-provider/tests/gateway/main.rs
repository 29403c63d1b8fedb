//! The SDK against a real gateway (the engine in this process on 127.0.0.1:0, real
//! sockets) and a real session host (`tap-client`). One test binary, one module per area.

mod calls;
mod common;
mod files;
mod gates;
mod pushes;
mod reconnect;
mod sessions;
mod updates;
