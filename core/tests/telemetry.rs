//! R-AUD-4: the telemetry opt-out. Its own test binary, since it sets environment variables
//! (the process's, shared by every thread).

use rotifer_memory_core::memory::TestMemory;
use rotifer_memory_core::model::DataPolicy;
use rotifer_memory_core::{Arg, ErrorCode};

#[test]
fn denials_send_telemetry_unless_the_user_opted_out() {
    let tm = TestMemory::create(1 << 20, DataPolicy::default()).unwrap();
    let telemetry = tm.root().join(".rotifer/telemetry.jsonl");
    let lines = || std::fs::read_to_string(&telemetry).map(|t| t.lines().count()).unwrap_or(0);
    let owner = tm.gene_memory(Some(format!("v2:{}", "a".repeat(64))), Some("text".into())).unwrap();
    let locked = Arg::Object(vec![
        ("readScope".into(), Arg::Str("CREATOR_GENE_ONLY".into())),
        ("writeScope".into(), Arg::Str("CREATOR_GENE_ONLY".into())),
        ("sharePolicy".into(), Arg::Str("PRIVATE".into())),
    ]);
    owner.write(&Arg::Str("k".into()), Arg::Bytes(vec![1]), &Arg::Str("CACHE".into()), &locked, &Arg::Undefined, 0).unwrap();
    let other = tm.gene_memory(Some(format!("v2:{}", "b".repeat(64))), Some("text".into())).unwrap();
    let cases: [(&str, Option<&str>, bool); 9] = [
        ("ROTIFER_TELEMETRY", None, true),
        ("ROTIFER_TELEMETRY", Some("0"), false),
        ("ROTIFER_TELEMETRY", Some("false"), false),
        ("ROTIFER_TELEMETRY", Some("OFF"), false),
        ("ROTIFER_TELEMETRY", Some("1"), true),
        ("DO_NOT_TRACK", Some("1"), false),
        ("DO_NOT_TRACK", Some("yes"), false),
        ("DO_NOT_TRACK", Some("0"), true),
        ("DO_NOT_TRACK", Some(""), true),
    ];
    for (var, value, sent) in cases {
        std::env::remove_var("ROTIFER_TELEMETRY");
        std::env::remove_var("DO_NOT_TRACK");
        if let Some(v) = value {
            std::env::set_var(var, v);
        }
        let before = lines();
        assert_eq!(other.read(&Arg::Str("k".into()), &Arg::Undefined, 0).unwrap_err().code, ErrorCode::AccessDenied);
        assert_eq!(lines() - before, usize::from(sent), "{var}={value:?}");
        assert_eq!(rotifer_memory_core::audit::telemetry_enabled(), sent, "{var}={value:?}");
    }
    tm.dispose();
}
