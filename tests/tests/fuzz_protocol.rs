//! The seeded fuzz suite over the real binary's stdio (PROTO-23): 10,000 hostile messages with a
//! fixed seed, interleaved with a real session whose turns ask questions and are answered.

use bravebot_tests::fuzz::FuzzRun;

/// The seed of the suite; another seed is another suite, run it with `fuzz_long`.
const SEED: u64 = 0xb5a7_eb07;
/// Messages in the test.
const MESSAGES: usize = 10_000;
/// Messages between probes.
const BATCH: usize = 250;
/// A real turn runs through every other batch.
const TURN_EVERY: usize = 2;
/// Resident size the server may have after the run. A fresh server with a session holds about
/// 10 MiB; the run may leave at most eight fuzz buffers of up to 1 MiB open and the allocator keeps
/// freed megabyte frames for reuse. Growth per message (as the in-flight set grew, about 1 KiB a
/// request) would pass 64 MiB in a longer run, which `fuzz_long` makes.
const RSS_BOUND_KIB: u64 = 64 * 1024;

// Verifies: PROTO-2, PROTO-22, PROTO-23
#[test]
fn ten_thousand_hostile_messages_leave_the_server_answering_framed_and_small() {
    let binary = std::env::var_os("BRAVEBOT_FUZZ_BIN").map(Into::into);
    let turns = (MESSAGES / BATCH).div_ceil(TURN_EVERY);
    let run = FuzzRun::start(turns, binary);
    let report = run.run(SEED, MESSAGES, BATCH, TURN_EVERY, false);
    eprintln!("{report}");
    assert!(report.messages >= MESSAGES, "{report}");
    assert_eq!(
        report.turns,
        report.batches.div_ceil(TURN_EVERY).min(turns),
        "a real turn went missing: {report}"
    );
    assert!(report.turns >= 10, "{report}");
    assert_eq!(
        report.exit_code,
        Some(0),
        "the server did not end cleanly: {report}"
    );
    assert!(report.panics.is_empty(), "panics: {:#?}", report.panics);
    assert!(
        report.rss_end_kib > 0 && report.rss_end_kib < RSS_BOUND_KIB,
        "resident size after the run: {report}"
    );
    for (family, n) in &report.by_family {
        assert!(*n > 0, "{family:?} never came up: {report}");
    }
    assert_eq!(
        report.by_family.len(),
        bravebot_tests::fuzz::Family::ALL.len(),
        "{report}"
    );
}
