//! The storage layer: files and SQLite. Each module uses only those listed before it (and the
//! crate's plain types: `error`, `model`, `time`, `access`, `quota`, and for now `layout` and
//! `audit`, which use nothing here but `watch`):
//!
//! 1. `lineage` — does a WAL belong to the database file beside it (R-HOST-1b);
//! 2. `watch` — the kernel's change reports (inotify), and how fresh a look a call needs;
//! 3. `integrity` — is the database file still the one opened (R-HOST-1);
//! 4. `schema` — the schema this package creates, and what it refuses;
//! 5. `rows` — entries and the agent row as stored;
//! 6. `migrate` — schema version 1 to 2, on open;
//! 7. `opening` — a database built, checked and opened;
//! 8. `store` — the registry of connections, reads, and the transaction of every change.

pub mod lineage;
pub mod watch;
pub mod integrity;
pub mod schema;
pub mod rows;
pub mod migrate;
pub mod opening;
pub mod store;
