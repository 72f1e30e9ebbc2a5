//! The PostgreSQL binding (R-BIND): a connection (`client`, `tls`), its setup (`setup`: the
//! embedded `sql/`), and the server functions of the calls as typed calls (`calls`). The rules
//! of the contract are enforced by the server functions themselves (R-BIND-4); validation and
//! messages stay the contract's own, above this module.

pub mod backup;
pub mod bundle;
pub mod calls;
pub mod client;
pub mod deployer;
pub mod moving;
pub mod setup;
mod tls;
