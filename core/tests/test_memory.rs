//! R-HOST-4: test memories created and disposed by many threads at once. A `flock` belongs to
//! an open file, so threads race for folder locks exactly like processes do: every creation's
//! sweep must leave the folders that others are still setting up alone.
//! (One test in this binary: it points TMPDIR at a folder of its own.)

use rotifer_memory_core::memory::TestMemory;
use rotifer_memory_core::model::DataPolicy;
use rotifer_memory_core::{Arg, GeneMemory};

const THREADS: usize = 6;
const ROUNDS: usize = 150;

#[test]
fn parallel_creations_never_sweep_each_other() {
    let tmp = std::env::temp_dir().join(format!("rotifer-core-tm-{}", rotifer_memory_core::store::unique_suffix()));
    std::fs::create_dir(&tmp).unwrap();
    std::env::set_var("TMPDIR", &tmp);
    let failures: Vec<String> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    let mut failures = Vec::new();
                    for round in 0..ROUNDS {
                        let made = TestMemory::create(1024 * 1024, DataPolicy::default()).and_then(|tm| {
                            let m: GeneMemory = tm.gene_memory(Some(format!("v2:{}", "a".repeat(64))), None)?;
                            m.write(&Arg::Str("k".into()), Arg::Bytes(vec![1]), &Arg::Str("CACHE".into()), &Arg::Undefined, &Arg::Undefined, 0)?;
                            tm.dispose();
                            Ok(())
                        });
                        if let Err(e) = made {
                            failures.push(format!("round {round}: {}", e.message));
                        }
                    }
                    failures
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().map(|e| e.file_name()).collect();
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(failures.is_empty(), "{} of {} creations failed: {failures:#?}", failures.len(), THREADS * ROUNDS);
    assert!(left.is_empty(), "left behind: {left:?}");
}
