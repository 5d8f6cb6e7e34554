//! A benchmark of the release `bravebot` binary (not a test): start-up, idle memory, and the
//! driver's own cost per tool round against an instant fake model.
//!
//! Run it with
//!
//! ```sh
//! cargo build --release -p bravebot
//! cargo run --release -p bravebot-tests --bin bench
//! ```
//!
//! It measures, over real stdio as an editor would drive it:
//!
//! - **initialize**: process start until the `initialize` response is read, the median of 20
//!   fresh processes;
//! - **idle RSS**: `VmRSS` of `/proc/<pid>/status` once `initialize` is answered and the server
//!   has sat idle briefly;
//! - **per round**: a turn whose planner calls `read_file` on a small trusted file (named in
//!   `files`) N times and then answers, for N = 20 and N = 100: the turn's wall time, less the
//!   time the fake model spent answering, divided by N. The fake model answers from memory, so
//!   what remains is the server's own work plus the loopback round trips;
//! - **peak RSS**: `VmHWM` of the server after the 20-round turn;
//! - **edit**: the driver time of a turn that edits one line of a 1 MiB open buffer, and the
//!   server's `VmHWM` after it (see [`measure_big_edit`]).
//!
//! The binary is `target/release/bravebot` beside this program, or `BRAVEBOT_BIN`.
#![allow(clippy::print_stdout)] // The table on stdout is this program's output.

use std::time::{Duration, Instant};

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::lsp_client::{LspClient, LspOptions, bravebot_binary};
use bravebot_tests::measure::proc_status_kib;
use serde_json::json;

const STARTS: usize = 20;
const EDITS: usize = 7;
const SMALL_FILE: &str = "small.txt";

fn main() {
    let binary = bravebot_binary();
    if !binary.to_string_lossy().contains("release") {
        eprintln!(
            "warning: measuring {}, which does not look like a release build; \
             run with --release or set BRAVEBOT_BIN",
            binary.display()
        );
    }
    let workspace = tempfile::tempdir().expect("create a workspace");
    let text: String = (1..=20)
        .map(|n| format!("line {n} of a small trusted file\n"))
        .collect();
    std::fs::write(workspace.path().join(SMALL_FILE), text).expect("write the small file");
    let options = || {
        LspOptions::new(workspace.path())
            .binary(&binary)
            .timeout(Duration::from_secs(120))
    };

    let mut starts: Vec<Duration> = (0..STARTS)
        .map(|_| {
            let began = Instant::now();
            let client = LspClient::start(options());
            client.initialize(json!({}));
            let took = began.elapsed();
            client.shutdown();
            took
        })
        .collect();
    starts.sort();
    let median = starts[STARTS / 2];

    let idle_rss = {
        let client = LspClient::start(options());
        client.initialize(json!({}));
        std::thread::sleep(Duration::from_millis(300));
        let rss = proc_status_kib(client.pid(), "VmRSS");
        client.shutdown();
        rss
    };

    let rounds: Vec<(usize, Round)> = [20, 100]
        .into_iter()
        .map(|n| (n, measure_rounds(n, options())))
        .collect();

    println!("bravebot benchmark: {}", binary.display());
    println!("{:<46} {:>20}", "measure", "value");
    println!(
        "{:<46} {:>20}",
        format!("start -> initialize answered (median of {STARTS})"),
        format_duration(median)
    );
    println!(
        "{:<46} {:>20}",
        "  (fastest, slowest)",
        format!(
            "{} / {}",
            format_duration(starts[0]),
            format_duration(starts[STARTS - 1])
        )
    );
    println!(
        "{:<46} {:>20}",
        "idle RSS after initialize",
        format_kib(idle_rss)
    );
    for (n, round) in &rounds {
        println!(
            "{:<46} {:>20}",
            format!("driver time per round, {n} rounds"),
            format_duration(round.per_round)
        );
        println!(
            "{:<46} {:>20}",
            "  (turn wall time / of which the fake model)",
            format!(
                "{} / {}",
                format_duration(round.wall),
                format_duration(round.model)
            )
        );
    }
    if let Some((_, round)) = rounds.iter().find(|(n, _)| *n == 20) {
        println!(
            "{:<46} {:>20}",
            "peak RSS over the 20-round turn",
            format_kib(round.peak_kib)
        );
    }
    // Runs alternate with `git diff --no-index` on the same two texts (the issue's yardstick).
    // The editor both front ends are (hunk texts, WRITE-61) and one sent both whole texts
    // (WRITE-60) take turns.
    let (mut by_hunks, mut whole, mut git) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..EDITS {
        by_hunks.push(measure_big_edit(options(), true));
        whole.push(measure_big_edit(options(), false));
        git.push(time_git_diff(workspace.path()));
    }
    git.sort();
    let git = git[EDITS / 2];
    for (edits, which) in [
        (by_hunks, "editor holding the buffer (hunkTexts)"),
        (whole, "editor sent both whole texts"),
    ] {
        report_edits(edits, which, git);
    }
}

/// The medians of one kind of edit turn, against `git`'s median.
fn report_edits(mut edits: Vec<Round>, which: &str, git: Duration) {
    edits.sort_by_key(|r| r.per_round);
    let mut peaks: Vec<Option<u64>> = edits.iter().map(|r| r.peak_kib).collect();
    peaks.sort();
    let peak = peaks[EDITS / 2];
    let edit = &edits[EDITS / 2];
    println!("edit_file on a 1 MiB open buffer, {which} (median of {EDITS})");
    println!(
        "{:<46} {:>20}",
        "  driver time",
        format_duration(edit.per_round)
    );
    println!(
        "{:<46} {:>20}",
        "  git diff --no-index of the same texts",
        format!(
            "{} ({:.2}x)",
            format_duration(git),
            edit.per_round.as_secs_f64() / git.as_secs_f64()
        )
    );
    println!(
        "{:<46} {:>20}",
        "  (turn wall time / of which the fake model)",
        format!(
            "{} / {}",
            format_duration(edit.wall),
            format_duration(edit.model)
        )
    );
    println!(
        "{:<46} {:>20}",
        "  peak RSS over that turn (median)",
        format_kib(peak)
    );
    println!(
        "{:<46} {:>20}",
        "  (resident before it, buffer open)",
        format_kib(edit.before_kib)
    );
}

/// One `edit_file` of one line in the middle of a 1 MiB buffer the editor has open: the diff,
/// the question, the hunk arithmetic and the `workspace/applyEdit`, approved at once. With
/// `hunk_texts` the client declares `hunkTexts` (WRITE-61), as both editors do, and rebuilds the
/// proposal from its own copy of the buffer and the hunks' texts before answering; without, the
/// question carries both texts (2 MiB of JSON). The buffer is opened, and the session's first
/// turn run, before the turn is timed; the time includes this program reading the question and
/// answering it, as an editor would.
fn measure_big_edit(options: LspOptions, hunk_texts: bool) -> Round {
    const BIG: &str = "big.txt";
    let lines: Vec<String> = (0..16_384)
        .map(|i| format!("{i:06} {}\n", "x".repeat(56)))
        .collect();
    let text = lines.concat();
    let cwd = options.cwd().to_path_buf();
    std::fs::write(cwd.join(BIG), &text).expect("write the big file");
    let target = lines[8_192].clone();
    std::fs::write(
        cwd.join("big.edited.txt"),
        text.replacen(&target, "edited\n", 1),
    )
    .expect("write the edited text, for git");
    let script = vec![
        // A first turn of the session, untimed: it asks the endpoint's model listing and opens
        // the first connection, which every session does once whatever its first turn does.
        Reply::text("Ready."),
        Reply::tool_call_with_id(
            "call_edit",
            "edit_file",
            json!({ "path": BIG, "old_text": target, "new_text": "edited\n", "why": "benchmark" }),
        ),
        Reply::text("Done."),
    ];
    let model = FakeModel::start_with(move |s| s.planner(script));
    let options = options.model_url(&model.url());
    let options = if hunk_texts {
        options.hunk_texts_capability()
    } else {
        options
    };
    let client = LspClient::start(options);
    client.initialize(json!({}));
    let held = text.clone();
    client.answer_permissions_with(move |q| {
        // What an editor does before it draws the diff: the proposal from its own buffer.
        if hunk_texts
            && bravebot_tests::lsp_client::rebuilt_from_hunks(&held, &q.params["subject"]["hunks"])
                .is_none()
        {
            eprintln!("error: the question's hunks carry no texts");
            std::process::exit(1);
        }
        bravebot_tests::lsp_client::Answer::choose(q, "allow_once")
    });
    let session = client.new_session();
    let uri = bravebot_tests::lsp_client::file_uri(&cwd.join(BIG));
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "plaintext", "version": 1, "text": text } }),
    );
    // Notifications are handled in order, before the next message is read: once this is
    // answered, the buffer is open, and what is timed below is the edit's turn alone.
    let _ = client.request("bravebot/session/status", json!({ "sessionId": session }));
    let warm = client.request(
        "bravebot/session/prompt",
        json!({ "sessionId": session, "text": "Get ready." }),
    );
    if !matches!(&warm, Ok(r) if r["stopReason"] == "endTurn") {
        eprintln!("error: the first turn ended with {warm:?}");
        std::process::exit(1);
    }
    let model_before: Duration = model.requests().iter().map(|r| r.duration).sum();
    // The peak so far is the buffer's arrival; from here `VmHWM` counts the turn alone (Linux
    // resets it to the resident size on `5` written to `clear_refs`).
    let _ = std::fs::write(format!("/proc/{}/clear_refs", client.pid()), "5");
    let before_kib = proc_status_kib(client.pid(), "VmRSS");
    let began = Instant::now();
    let result = client.request(
        "bravebot/session/prompt",
        json!({ "sessionId": session, "text": "Edit the big file.", "files": [BIG] }),
    );
    let wall = began.elapsed();
    let edits = client
        .server_requests(bravebot_tests::lsp_client::APPLY_EDIT)
        .len();
    if !matches!(&result, Ok(r) if r["stopReason"] == "endTurn") || edits != 1 {
        eprintln!("error: the edit turn ended with {result:?} and {edits} applyEdit requests");
        std::process::exit(1);
    }
    let peak_kib = proc_status_kib(client.pid(), "VmHWM");
    client.shutdown();
    let model_time: Duration = model
        .requests()
        .iter()
        .map(|r| r.duration)
        .sum::<Duration>()
        - model_before;
    let own = wall.saturating_sub(model_time);
    Round {
        wall,
        model: model_time,
        per_round: own,
        peak_kib,
        before_kib,
    }
}

/// The wall time of `git diff --no-index` between `big.txt` and `big.edited.txt` in `dir`.
fn time_git_diff(dir: &std::path::Path) -> Duration {
    let began = Instant::now();
    let out = std::process::Command::new("git")
        .args(["diff", "--no-index", "--", "big.txt", "big.edited.txt"])
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    let took = began.elapsed();
    if !out.is_ok_and(|o| !o.stdout.is_empty()) {
        eprintln!("error: git diff --no-index found no change to time");
        std::process::exit(1);
    }
    took
}

/// What one measured turn cost.
struct Round {
    wall: Duration,
    model: Duration,
    per_round: Duration,
    peak_kib: Option<u64>,
    /// Resident before the turn began, where that was measured.
    before_kib: Option<u64>,
}

/// Runs one turn of `n` `read_file` rounds in a fresh server.
fn measure_rounds(n: usize, options: LspOptions) -> Round {
    let mut script: Vec<Reply> = (0..n)
        .map(|i| {
            Reply::tool_call_with_id(
                &format!("call_{i}"),
                "read_file",
                json!({ "path": SMALL_FILE, "why": "benchmark" }),
            )
        })
        .collect();
    script.push(Reply::text("Done."));
    let model = FakeModel::start_with(move |s| s.planner(script));
    // The default round limit is below 100; `maxRounds` in the home settings lifts it.
    let settings = format!("{{\"maxRounds\": {}}}", n + 10);
    let options = options.home_file(".bravebot/settings.json", settings);
    let client = LspClient::start(options.model_url(&model.url()));
    client.initialize(json!({}));
    let session = client.new_session();
    let began = Instant::now();
    let result = client.request(
        "bravebot/session/prompt",
        json!({ "sessionId": session, "text": "Read the file again and again.", "files": [SMALL_FILE] }),
    );
    let wall = began.elapsed();
    match &result {
        Ok(result) if result["stopReason"] == "endTurn" => {}
        other => {
            eprintln!("error: the {n}-round turn ended with {other:?}; its figures would mislead");
            std::process::exit(1);
        }
    }
    let peak_kib = proc_status_kib(client.pid(), "VmHWM");
    client.shutdown();
    let model_time: Duration = model
        .requests()
        .iter()
        .map(|request| request.duration)
        .sum();
    let own = wall.saturating_sub(model_time);
    Round {
        wall,
        model: model_time,
        per_round: own / u32::try_from(n).unwrap_or(u32::MAX),
        peak_kib,
        before_kib: None,
    }
}

fn format_duration(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1000.0)
}

fn format_kib(kib: Option<u64>) -> String {
    match kib {
        Some(kib) => format!("{:.1} MiB", kib as f64 / 1024.0),
        None => "n/a".to_owned(),
    }
}
