//! The deployer's listing page by page (R-HOST-2, R-RET-4): the pages make the whole listing in
//! key order with its totals, and never show an expired entry.

use rotifer_memory_core::inspect::{list_agent_memory_page, ListPage, ListTotals, MAX_PAGE};
use rotifer_memory_core::memory::{create_agent_memory, list_agent_memory_matching};
use rotifer_memory_core::model::{Category, DataPolicy};
use rotifer_memory_core::{Arg, GeneMemory, Layout};

mod common;
use common::{Project, T0};

fn write(g: &GeneMemory, key: &str, len: usize, category: &str, days: Option<f64>, now: i64) {
    let retention = match days {
        Some(d) => Arg::Object(vec![
            ("maxRetentionDays".into(), Arg::Number(d)),
            ("autoDeleteOnTermination".into(), Arg::Bool(false)),
            ("anonymizationSupported".into(), Arg::Bool(false)),
        ]),
        None => Arg::Undefined,
    };
    g.write(&Arg::Str(key.into()), Arg::Bytes(vec![1; len]), &Arg::Str(category.into()), &Arg::Undefined, &retention, now).unwrap();
}
/// Every page of a listing, `size` entries at a time.
fn pages(l: &Layout, category: Option<Category>, prefix: Option<&str>, size: u32, now: i64) -> (Vec<Vec<String>>, ListTotals) {
    let mut out = Vec::new();
    let mut after: Option<String> = None;
    let mut totals = None;
    loop {
        let p = list_agent_memory_page(l, "a", category, prefix, after.as_deref(), size, after.is_none(), now).unwrap();
        if after.is_none() {
            totals = p.totals;
        } else {
            assert_eq!(p.totals, None, "totals only when asked for");
        }
        assert!(p.entries.len() <= size as usize);
        after = p.entries.last().map(|e| e.key.clone());
        out.push(p.entries.into_iter().map(|e| e.key).collect());
        if !p.more {
            return (out, totals.unwrap());
        }
    }
}

#[test]
fn r_host_2_pages_make_the_whole_listing_in_key_order_with_its_totals() {
    let r = Project::new("pages");
    let l = r.layout();
    create_agent_memory(&l, "a", 1 << 20, DataPolicy::default()).unwrap();
    let g = r.gene("a");
    // Keys whose bytes sort differently from their characters, and a prefix's edges.
    let keys = ["b/1", "b/2", "b/3", "b0", "a", "b/\u{e9}", "b/\u{ff}x", "c", "b/"];
    for (i, k) in keys.iter().enumerate() {
        write(&g, k, i, if i % 2 == 0 { "CACHE" } else { "CONTEXT" }, None, T0);
    }
    let whole = |c, p| list_agent_memory_matching(&l, "a", c, p, T0).unwrap();
    for (category, prefix) in [(None, None), (None, Some("b/")), (Some(Category::Cache), None), (Some(Category::Context), Some("b/")), (None, Some("zz"))] {
        let expected = whole(category, prefix);
        for size in [1, 2, 3, 100] {
            let (got, totals) = pages(&l, category, prefix, size, T0);
            let flat: Vec<String> = got.iter().flatten().cloned().collect();
            assert_eq!(flat, expected.iter().map(|e| e.key.clone()).collect::<Vec<_>>(), "{category:?} {prefix:?} by {size}");
            assert_eq!(got.len(), expected.len().div_ceil(size as usize).max(1), "no empty page at the end but for an empty listing");
            assert_eq!(totals, ListTotals { entries: expected.len() as u64, bytes: expected.iter().map(|e| e.size).sum(), quota: 1 << 20 });
        }
    }
    // The page's fields are the listing's, and its JSON text says the same.
    let p = list_agent_memory_page(&l, "a", None, None, None, 100, true, T0).unwrap();
    assert_eq!(p.entries, whole(None, None));
    let v: serde_json::Value = serde_json::from_str(&p.to_json()).unwrap();
    assert_eq!(v["more"], false);
    assert_eq!(v["totals"]["entries"], 9);
    assert_eq!(v["totals"]["quota"], 1 << 20);
    let e = &v["entries"].as_array().unwrap();
    assert_eq!(e.len(), 9);
    for (j, l) in p.entries.iter().enumerate() {
        assert_eq!(e[j]["key"], l.key.as_str());
        assert_eq!(e[j]["category"], l.category.as_str());
        assert_eq!(e[j]["size"], l.size);
        assert_eq!(e[j]["createdBy"], l.created_by.as_str());
        assert_eq!(e[j]["updatedAt"], rotifer_memory_core::time::format_ms(l.updated_at).as_str());
    }
    // An `after` before the prefix's range starts it at its beginning.
    let p = list_agent_memory_page(&l, "a", None, Some("b/"), Some("a"), 100, false, T0).unwrap();
    assert_eq!(p.entries.first().map(|e| e.key.as_str()), Some("b/"));
    assert!(list_agent_memory_page(&l, "a", None, None, None, 0, false, T0).is_err());
    assert!(list_agent_memory_page(&l, "a", None, None, None, MAX_PAGE + 1, false, T0).is_err());
}

#[test]
fn r_ret_4_a_page_never_shows_an_expired_entry_and_a_missing_agent_has_none() {
    let r = Project::new("expired");
    let l = r.layout();
    create_agent_memory(&l, "a", 1 << 20, DataPolicy::default()).unwrap();
    let g = r.gene("a");
    write(&g, "keep", 1, "CACHE", None, T0);
    write(&g, "old", 1, "CACHE", Some(1.0), T0);
    let day = 86_400_000;
    let p = list_agent_memory_page(&l, "a", None, None, None, 10, true, T0 + 2 * day).unwrap();
    assert_eq!(p.entries.iter().map(|e| e.key.as_str()).collect::<Vec<_>>(), ["keep"]);
    assert_eq!(p.totals.unwrap().entries, 1);
    let none = list_agent_memory_page(&l, "nobody", None, None, None, 10, true, T0).unwrap();
    assert_eq!(none, ListPage { entries: vec![], more: false, totals: Some(ListTotals { entries: 0, bytes: 0, quota: 0 }) });
    assert!(!l.root.join(".rotifer/memory/nobody.db").exists(), "no database is created");
}
