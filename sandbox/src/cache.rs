//! Compiled gene modules kept by content hash in a project's `.rotifer/cache/wasm/`, so a second
//! run does not compile again. A compiled module is native code that wasmtime loads unchecked,
//! so an entry is used only if this user's own processes wrote it: each carries an HMAC-SHA-256
//! under a key kept outside every project (`$XDG_CACHE_HOME/rotifer/module-cache.key`, else
//! `~/.cache/rotifer/…`, 0600 in a 0700 folder). An entry copied in with a project, planted,
//! renamed or damaged fails it and is ignored; so is one that is not a single-link regular file
//! of this user's (0600) in a real folder of this user's (0700, reached through no symlink). Then
//! the module is compiled afresh. Without a usable key there is no cache.

use crate::check::{self, GeneModule};
use crate::engine;
use sha2::{Digest, Sha256};
use std::fs;
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};
use wasmtime::Module;

/// Where a module was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Cache,
    Compiled,
}

/// The most entries a cache folder keeps; the oldest go first.
pub const MAX_ENTRIES: usize = 256;
/// A temporary file older than this was left by a process that died while writing it.
const STALE_TMP: Duration = Duration::from_secs(600);
const KEY_BYTES: usize = 32;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// Owned by this user, and nobody else may write it (and, with `exact`, exactly that mode).
fn owned(meta: &fs::Metadata, exact: Option<u32>) -> bool {
    meta.uid() == euid() && meta.mode() & 0o022 == 0 && exact.is_none_or(|m| meta.mode() & 0o777 == m)
}

fn hmac(key: &[u8; KEY_BYTES], parts: &[&[u8]]) -> [u8; 32] {
    let mut block = [0u8; 64];
    block[..KEY_BYTES].copy_from_slice(key);
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    for p in parts {
        inner.update((p.len() as u64).to_le_bytes());
        inner.update(p);
    }
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// The folder of the key: `$XDG_CACHE_HOME/rotifer`, else `$HOME/.cache/rotifer`.
fn key_folder() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()).map(PathBuf::from).or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache")))?;
    base.is_absolute().then(|| base.join("rotifer"))
}

fn read_key(file: &Path) -> Option<[u8; KEY_BYTES]> {
    let mut f = fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(file).ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.nlink() != 1 || !owned(&meta, Some(0o600)) || meta.len() != KEY_BYTES as u64 {
        return None;
    }
    let mut key = [0u8; KEY_BYTES];
    f.read_exact(&mut key).ok()?;
    Some(key)
}

/// This user's cache key, made on first use; `None` if it cannot be made or trusted.
fn key() -> Option<&'static [u8; KEY_BYTES]> {
    static KEY: OnceLock<Option<[u8; KEY_BYTES]>> = OnceLock::new();
    KEY.get_or_init(|| {
        let dir = key_folder()?;
        let mut b = fs::DirBuilder::new();
        b.recursive(true);
        std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
        b.create(&dir).ok()?;
        let meta = fs::symlink_metadata(&dir).ok()?;
        if !meta.is_dir() || !owned(&meta, Some(0o700)) {
            return None;
        }
        let file = dir.join("module-cache.key");
        if let Some(k) = read_key(&file) {
            return Some(k);
        }
        let mut k = [0u8; KEY_BYTES];
        // SAFETY: writes at most KEY_BYTES bytes into `k`.
        if unsafe { libc::getrandom(k.as_mut_ptr().cast(), KEY_BYTES, 0) } != KEY_BYTES as isize {
            return None;
        }
        // Another process may make it at the same moment: whichever file is there is the key.
        if let Ok(mut f) = fs::OpenOptions::new().write(true).create_new(true).mode(0o600).custom_flags(libc::O_NOFOLLOW).open(&file) {
            f.write_all(&k).ok()?;
        }
        read_key(&file)
    })
    .as_ref()
}

/// The file name of `bytes` compiled by this engine (version and settings included).
fn entry_name(bytes: &[u8]) -> Result<String, String> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine::engine()?.precompile_compatibility_hash().hash(&mut h);
    Ok(format!("{}-{:016x}.cwasm", hex(&Sha256::digest(bytes)), h.finish()))
}

/// `dir` as a cache folder: it and the two folders above it (the project's `.rotifer/cache` and
/// `.rotifer`, each made 0700 if missing) must be real folders of this user's that others cannot
/// write, and `dir` 0700; `None` if not.
fn folder(dir: &Path) -> Option<PathBuf> {
    let trusted = |p: &Path, exact| fs::symlink_metadata(p).map(|m| m.is_dir() && owned(&m, exact)).unwrap_or(false);
    let cache = dir.parent()?;
    let rotifer = cache.parent()?;
    for (p, exact) in [(rotifer, None), (cache, None), (dir, Some(0o700))] {
        match fs::symlink_metadata(p) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut b = fs::DirBuilder::new();
                std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
                b.create(p).ok()?;
            }
            Err(_) => return None,
        }
        if !trusted(p, exact) {
            return None;
        }
    }
    Some(dir.to_path_buf())
}

/// The serialized module in `file`, if its HMAC holds (read through one descriptor, never a symlink).
fn read_entry(file: &Path, name: &str, key: &[u8; KEY_BYTES]) -> Option<Vec<u8>> {
    let mut f = fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(file).ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.nlink() != 1 || !owned(&meta, Some(0o600)) {
        return None;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    f.read_to_end(&mut bytes).ok()?;
    if bytes.len() < 32 || hmac(key, &[name.as_bytes(), &bytes[32..]]) != bytes[..32] {
        return None;
    }
    bytes.drain(..32);
    Some(bytes)
}

fn write_entry(dir: &Path, name: &str, module: &Module, key: &[u8; KEY_BYTES]) {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let Ok(serialized) = module.serialize() else { return };
    let tmp = dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed)));
    let written = (|| -> std::io::Result<()> {
        let mut f = fs::OpenOptions::new().write(true).create_new(true).mode(0o600).custom_flags(libc::O_NOFOLLOW).open(&tmp)?;
        f.write_all(&hmac(key, &[name.as_bytes(), &serialized]))?;
        f.write_all(&serialized)?;
        f.set_permissions(fs::Permissions::from_mode(0o600))?;
        fs::rename(&tmp, dir.join(name))
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    tidy(dir);
}

/// Removes temporary files left by dead processes, and the oldest entries past `MAX_ENTRIES`.
fn tidy(dir: &Path) {
    let Ok(list) = fs::read_dir(dir) else { return };
    let now = SystemTime::now();
    let mut entries = Vec::new();
    for e in list.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(meta) = e.metadata() else { continue };
        let modified = meta.modified().unwrap_or(now);
        if name.ends_with(".tmp") && now.duration_since(modified).unwrap_or_default() > STALE_TMP {
            let _ = fs::remove_file(e.path());
        } else if name.ends_with(".cwasm") {
            entries.push((modified, e.path()));
        }
    }
    if entries.len() > MAX_ENTRIES {
        entries.sort();
        for (_, path) in &entries[..entries.len() - MAX_ENTRIES] {
            let _ = fs::remove_file(path);
        }
    }
}

/// The checked module of `bytes`: from `dir` when it holds it, else compiled (and kept there).
/// Without a `dir` or a key, always compiled. Compiling gives up at `deadline_ms`.
pub fn load(bytes: &[u8], what: &str, dir: Option<&Path>, deadline_ms: Option<i64>) -> Result<(GeneModule, Source), String> {
    let cache = dir.and_then(folder).zip(key());
    let Some((dir, key)) = cache else { return Ok((check::load_until(bytes, what, deadline_ms)?, Source::Compiled)) };
    let name = entry_name(bytes)?;
    if let Some(serialized) = read_entry(&dir.join(&name), &name, key) {
        // SAFETY: the bytes are what this engine serialized in a process of this user's: the
        // HMAC under this user's key, over the entry's name and bytes, says so.
        if let Ok(module) = unsafe { Module::deserialize(engine::engine()?, &serialized) } {
            return Ok((check::check(module, what)?, Source::Cache));
        }
    }
    let gene = check::load_until(bytes, what, deadline_ms)?;
    write_entry(&dir, &name, &gene.module, key);
    Ok((gene, Source::Compiled))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GENE: &str = r#"(module (memory (export "memory") 1)
      (data (i32.const 100) "{}\00") (func (export "express") (param i32 i32) (result i32) (i32.const 100)))"#;

    fn project() -> PathBuf {
        let root = std::env::temp_dir().join(format!("rotifer-cache-test-{}-{}", std::process::id(), rotifer_memory_core::store::unique_suffix()));
        fs::create_dir_all(root.join(".rotifer")).unwrap();
        fs::set_permissions(root.join(".rotifer"), fs::Permissions::from_mode(0o700)).unwrap();
        root
    }

    #[test]
    fn a_second_load_comes_from_the_cache_and_a_tampered_or_foreign_entry_does_not() {
        let root = project();
        let dir = root.join(".rotifer/cache/wasm");
        let bytes = wat::parse_str(GENE).unwrap();
        assert_eq!(load(&bytes, "g", Some(&dir), None).unwrap().1, Source::Compiled);
        assert_eq!(load(&bytes, "g", Some(&dir), None).unwrap().1, Source::Cache);
        assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        let name = entry_name(&bytes).unwrap();
        let file = dir.join(&name);
        assert_eq!(fs::metadata(&file).unwrap().mode() & 0o777, 0o600);

        // Damaged: compiled again (and rewritten).
        let mut b = fs::read(&file).unwrap();
        let last = b.len() - 1;
        b[last] ^= 0xff;
        fs::write(&file, &b).unwrap();
        assert_eq!(load(&bytes, "g", Some(&dir), None).unwrap().1, Source::Compiled);
        assert_eq!(load(&bytes, "g", Some(&dir), None).unwrap().1, Source::Cache);

        // Planted: an entry made under another key (another user, another machine) with a plain
        // hash in front, as the file would be without the HMAC.
        let serialized = fs::read(&file).unwrap()[32..].to_vec();
        let mut foreign = Sha256::digest(&serialized).to_vec();
        foreign.extend_from_slice(&serialized);
        fs::write(&file, &foreign).unwrap();
        assert_eq!(load(&bytes, "g", Some(&dir), None).unwrap().1, Source::Compiled);

        // Renamed: a valid entry of another module under this one's name.
        let other = wat::parse_str(GENE.replace("{}", "[]")).unwrap();
        load(&other, "g", Some(&dir), None).unwrap();
        let other_file = dir.join(entry_name(&other).unwrap());
        fs::copy(&other_file, &file).unwrap();
        assert_eq!(load(&bytes, "g", Some(&dir), None).unwrap().1, Source::Compiled);

        // Open to others: not used at all (compiled every time).
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(load(&bytes, "g", Some(&dir), None).unwrap().1, Source::Compiled);
        assert_eq!(load(&bytes, "g", Some(&dir), None).unwrap().1, Source::Compiled);
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn a_project_without_rotifer_gets_the_folders_made_private() {
        let root = std::env::temp_dir().join(format!("rotifer-cache-bare-{}", rotifer_memory_core::store::unique_suffix()));
        fs::create_dir_all(&root).unwrap();
        let dir = root.join(".rotifer/cache/wasm");
        let bytes = wat::parse_str(GENE).unwrap();
        assert_eq!(load(&bytes, "g", Some(&dir), None).unwrap().1, Source::Compiled);
        assert_eq!(load(&bytes, "g", Some(&dir), None).unwrap().1, Source::Cache);
        for p in [root.join(".rotifer"), root.join(".rotifer/cache"), dir.clone()] {
            assert_eq!(fs::metadata(&p).unwrap().mode() & 0o777, 0o700, "{}", p.display());
        }
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn a_symlinked_cache_folder_is_not_followed() {
        let root = project();
        let elsewhere = std::env::temp_dir().join(format!("rotifer-cache-elsewhere-{}", rotifer_memory_core::store::unique_suffix()));
        fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join(".rotifer/cache")).unwrap();
        let bytes = wat::parse_str(GENE).unwrap();
        let dir = root.join(".rotifer/cache/wasm");
        assert_eq!(load(&bytes, "g", Some(&dir), None).unwrap().1, Source::Compiled);
        assert_eq!(load(&bytes, "g", Some(&dir), None).unwrap().1, Source::Compiled);
        assert!(fs::read_dir(&elsewhere).unwrap().next().is_none(), "nothing written through the link");
        let _ = fs::remove_dir_all(&root);
        let _ = fs::remove_dir_all(&elsewhere);
    }

    #[test]
    fn stale_temporary_files_and_the_oldest_entries_past_the_bound_are_removed() {
        let root = project();
        let dir = root.join(".rotifer/cache/wasm");
        folder(&dir).unwrap();
        let stale = dir.join(".x.1.0.tmp");
        fs::write(&stale, b"left by a dead process").unwrap();
        let old = SystemTime::now() - Duration::from_secs(3600);
        fs::File::options().write(true).open(&stale).unwrap().set_modified(old).unwrap();
        for i in 0..MAX_ENTRIES + 3 {
            let f = dir.join(format!("{i:04}.cwasm"));
            fs::write(&f, b"x").unwrap();
            fs::File::options().write(true).open(&f).unwrap().set_modified(old + Duration::from_secs(i as u64)).unwrap();
        }
        tidy(&dir);
        assert!(!stale.exists());
        let left: Vec<_> = fs::read_dir(&dir).unwrap().flatten().map(|e| e.file_name().into_string().unwrap()).collect();
        assert_eq!(left.len(), MAX_ENTRIES);
        assert!(!left.contains(&"0000.cwasm".to_string()) && left.contains(&format!("{:04}.cwasm", MAX_ENTRIES + 2)));
        let _ = fs::remove_dir_all(&root);
    }
}
