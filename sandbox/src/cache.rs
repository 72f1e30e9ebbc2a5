//! Compiled gene modules kept by content hash in a project's `.rotifer/cache/wasm/`, so a second run
//! does not compile again. A file is used only if the folder is a real folder of this user's
//! that nobody else may enter (0700), the file a single-link regular file of this user's (0600),
//! and its SHA-256 matches: anything else is ignored and the module compiled afresh.

use crate::check::{self, GeneModule};
use crate::engine;
use sha2::{Digest, Sha256};
use std::fs;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use wasmtime::Module;

/// Where a module was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Cache,
    Compiled,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The file name of `bytes` compiled by this engine (version and settings included).
fn entry_name(bytes: &[u8]) -> Result<String, String> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine::engine()?.precompile_compatibility_hash().hash(&mut h);
    Ok(format!("{}-{:016x}.cwasm", hex(&Sha256::digest(bytes)), h.finish()))
}

fn owned_private(meta: &fs::Metadata, mode: u32) -> bool {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    meta.uid() == me && meta.mode() & 0o777 == mode
}

/// `dir` as a cache folder: created 0700 if missing; `None` if it is not safe to use.
fn folder(dir: &Path) -> Option<PathBuf> {
    match fs::symlink_metadata(dir) {
        Ok(meta) => (meta.is_dir() && owned_private(&meta, 0o700)).then(|| dir.to_path_buf()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut b = fs::DirBuilder::new();
            b.recursive(true);
            std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
            b.create(dir).ok()?;
            let meta = fs::symlink_metadata(dir).ok()?;
            (meta.is_dir() && owned_private(&meta, 0o700)).then(|| dir.to_path_buf())
        }
        Err(_) => None,
    }
}

fn read_entry(file: &Path) -> Option<Vec<u8>> {
    let meta = fs::symlink_metadata(file).ok()?;
    if !meta.is_file() || meta.nlink() != 1 || !owned_private(&meta, 0o600) {
        return None;
    }
    let bytes = fs::read(file).ok()?;
    if bytes.len() < 32 || Sha256::digest(&bytes[32..]).as_slice() != &bytes[..32] {
        return None;
    }
    Some(bytes[32..].to_vec())
}

fn write_entry(dir: &Path, name: &str, module: &Module) {
    let Ok(serialized) = module.serialize() else { return };
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| -> std::io::Result<()> {
        let mut f = fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
        f.write_all(&Sha256::digest(&serialized))?;
        f.write_all(&serialized)?;
        f.set_permissions(fs::Permissions::from_mode(0o600))?;
        fs::rename(&tmp, dir.join(name))
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
}

/// The checked module of `bytes`: from `dir` when it holds it, else compiled (and kept there).
/// Without a `dir`, always compiled.
pub fn load(bytes: &[u8], what: &str, dir: Option<&Path>) -> Result<(GeneModule, Source), String> {
    let Some(dir) = dir.and_then(folder) else { return Ok((check::load(bytes, what)?, Source::Compiled)) };
    let name = entry_name(bytes)?;
    if let Some(serialized) = read_entry(&dir.join(&name)) {
        // SAFETY: the bytes are what this engine serialized (checked by SHA-256 above) in a
        // folder only this user can write.
        if let Ok(module) = unsafe { Module::deserialize(engine::engine()?, &serialized) } {
            return Ok((check::check(module, what)?, Source::Cache));
        }
    }
    let gene = check::load(bytes, what)?;
    write_entry(&dir, &name, &gene.module);
    Ok((gene, Source::Compiled))
}
