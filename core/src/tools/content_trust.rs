//! Content trust for files: the one helper that decides, for a set of files whose bytes were read
//! once, which of them the planner may read.
//!
//! A file is readable when a rule vouches for its path (a person's gesture, the session's
//! defaults) or when the isolated check passed exactly the bytes in hand. Everything else is held
//! back, with the reason the planner is told. `read_file`, `edit_file`, `search` and `run` all come
//! here (seed 002: one check, at the same point, through the same helper), so a file costs one
//! check per session for the same bytes whichever tool meets it first.
//!
//! A verdict is remembered with a fingerprint of the bytes it judged ([`policy::fingerprint`]):
//! the same bytes again are answered from memory, changed bytes are judged again. A check is sent
//! only for text within the check budget: a larger file is not checked at all (the whole file or
//! nothing), and a binary one has no text for a check to read. New checks run a few at a time.

use std::path::Path;

use futures::StreamExt;

use super::Call;
use crate::check::{self, CheckOutcome};
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::label::{Integrity, Label};
use crate::kernel::labelled::Labelled;
use crate::kernel::policy::{self, Fingerprint, Verdict};
use crate::screen::Update;
use crate::verdict_store::Key as StoreKey;
use crate::workspace_file;

/// Checks in flight at once for one call. Two cores and a model endpoint that answers a handful
/// of requests in parallel: more would queue at the endpoint rather than finish sooner.
pub const PARALLEL_CHECKS: usize = 4;

/// One file to judge: where it was named, where its links lead, how it is shown, and the bytes
/// read once.
pub struct Candidate<'a> {
    pub path: &'a Path,
    pub real: &'a Path,
    pub shown: &'a str,
    pub bytes: &'a Labelled<Vec<u8>>,
    /// The file's identity on disk, where the bytes came from a file that is there: a mark on
    /// the same file under another name holds it back too (TRUST-11).
    pub file: Option<crate::kernel::trust::FileId>,
}

/// The label every read of a workspace file gives its bytes, and so the one a check of a file is
/// fixed to judge.
pub const WORKSPACE_FILE: Label = Label::UNTRUSTED_PRIVATE;

/// Why a file is held back from the planner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// The agent wrote data nobody vouched for there.
    Marked,
    /// A check judged these bytes and did not find them safe.
    Unsafe,
    /// The check did not complete, so it says nothing.
    Inconclusive,
    /// Larger than the check budget: not checked at all.
    TooLarge,
    /// Not text: nothing a check could read.
    Binary,
    /// Read checks are off (`vetting.reads: false`).
    ChecksOff,
    /// More new checks than the call may make: not checked this time.
    OverCap,
}

impl Hold {
    /// The reason, in the driver's words, for the planner. An unsafe verdict and an inconclusive
    /// one read the same here (JUDGE-6): which of the two a check gave is a bit drawn from the
    /// bytes, and the planner is not told it. The person's question and the audit trail still say
    /// which.
    pub fn reason(self) -> &'static str {
        match self {
            Hold::Marked => "a write of content nobody vouched for marked it untrusted",
            Hold::Unsafe | Hold::Inconclusive => "nobody vouched for it and no check cleared it",
            Hold::TooLarge => {
                "nobody vouched for it and it is larger than the check reads, so it was not checked; the person may vouch for it"
            }
            Hold::Binary => {
                "nobody vouched for it and it is not text, so there is nothing to check"
            }
            Hold::ChecksOff => "nobody vouched for it and read checks are off",
            Hold::OverCap => {
                "nobody vouched for it and it was not checked this time: narrow the request"
            }
        }
    }
}

/// What the helper decided for one file.
pub struct Judged {
    /// `None` when the planner may read the file; otherwise why not.
    pub hold: Option<Hold>,
    /// Whether a rule (rather than a check) vouches for the path.
    pub by_rule: bool,
    /// The verdict these bytes got, now or earlier this session, if a check judged them.
    pub verdict: Option<Verdict>,
    /// What a check sent now said, for the question a read may put next.
    pub outcome: Option<CheckOutcome>,
}

impl Judged {
    pub fn readable(&self) -> bool {
        self.hold.is_none()
    }

    /// Held back for `hold`, by nothing a check said now.
    fn held(hold: Hold) -> Judged {
        Judged {
            hold: Some(hold),
            by_rule: false,
            verdict: None,
            outcome: None,
        }
    }
}

/// What the session already knows about one file, without sending anything: a rule, a
/// remembered verdict for these bytes (counted as a check saved), or the reason no check will be
/// sent. `Err` carries the fingerprint a new check would be remembered under.
fn known(call: &Call<'_>, c: &Candidate<'_>) -> Result<Judged, Fingerprint> {
    known_counting(call, c, true)
}

/// Whether the planner may read exactly these bytes now, by a rule or a verdict already given,
/// without sending a check or counting one saved: the label a change's original is read with.
pub fn readable_now(call: &Call<'_>, c: &Candidate<'_>) -> bool {
    known_counting(call, c, false).is_ok_and(|j| j.readable())
}

/// What [`readable_now`] answers for a file the trust map decides by its rules alone (trusted, or
/// marked as holding what nobody vouched for), without its bytes; `None` where the answer would
/// depend on them (a remembered verdict, the check).
pub fn readable_by_rule(call: &Call<'_>, path: &Path, real: &Path) -> Option<bool> {
    let trust = call.session.trust.lock();
    match workspace_file::integrity_through_links(&trust, path, real, None)? {
        Integrity::Trusted => Some(true),
        Integrity::Untrusted => Some(false),
    }
}

fn known_counting(call: &Call<'_>, c: &Candidate<'_>, count: bool) -> Result<Judged, Fingerprint> {
    let session = call.session;
    let decided = |hold: Option<Hold>, by_rule: bool| Judged {
        hold,
        by_rule,
        verdict: None,
        outcome: None,
    };
    let by_rule =
        workspace_file::integrity_through_links(&session.trust.lock(), c.path, c.real, c.file);
    match by_rule {
        Some(Integrity::Trusted) => return Ok(decided(None, true)),
        Some(Integrity::Untrusted) => return Ok(decided(Some(Hold::Marked), false)),
        None => {}
    }
    let fingerprint = policy::fingerprint(c.bytes);
    let mut verdicts = session.verdicts.lock().unwrap_or_else(|p| p.into_inner());
    if verdicts.recall(c.real, &fingerprint).is_none()
        && let Some(store) = &session.verdict_store
        && let Some(kept) = store.find(&stored_key(call, c, &fingerprint))
    {
        // A verdict an earlier session kept for the same bytes, judge and question: taken into
        // this session's memory exactly as a fresh one would be (no reasons: those stayed with
        // the session that saw them), and the trail says it was reused and from when.
        verdicts.keep(c.real.to_path_buf(), fingerprint, kept.verdict);
        session.state().audit.record(
            Gate::Trust,
            if kept.verdict == Verdict::Safe {
                Decision::Allowed
            } else {
                Decision::Refused
            },
            format!(
                "{}: these bytes {} (origin checker; verdict of {} reused from {})",
                c.shown,
                if kept.verdict == Verdict::Safe {
                    "are readable after a clean check"
                } else {
                    "stay quarantined"
                },
                kept.when(),
                crate::verdict_store::SHOWN
            ),
        );
    }
    if let Some(verdict) = verdicts.recall(c.real, &fingerprint) {
        verdicts.saved += u64::from(count);
        let hold = match verdict {
            Verdict::Safe => None,
            _ => Some(Hold::Unsafe),
        };
        return Ok(Judged {
            verdict: Some(verdict),
            ..decided(hold, false)
        });
    }
    if !session.settings.vetting_reads {
        return Ok(decided(Some(Hold::ChecksOff), false));
    }
    let budget = usize::try_from(session.settings.check_max_bytes).unwrap_or(usize::MAX);
    if policy::measure(c.bytes).1 > budget {
        return Ok(decided(Some(Hold::TooLarge), false));
    }
    if !policy::is_text(c.bytes) {
        return Ok(decided(Some(Hold::Binary), false));
    }
    Err(fingerprint)
}

/// Where a check over a workspace file says the bytes came from, and what they were expected to
/// be: the question's own words, part of a kept verdict's key.
fn origin_of(c: &Candidate<'_>) -> String {
    format!("the file {} in the person's workspace", c.shown)
}

const EXPECTS: &str = "a file of the person's project";

/// The key a verdict on `c`'s bytes is kept under across sessions: the bytes, the judge the
/// check goes to (wire format, endpoint, model) and the question (the instructions' version and
/// the words about the file) (CHECK-8).
fn stored_key(call: &Call<'_>, c: &Candidate<'_>, fingerprint: &Fingerprint) -> StoreKey {
    let judge = call.session.checker().config();
    crate::verdict_store::key(
        fingerprint,
        &[judge.api.as_str(), &judge.base_url, &judge.name],
        &[check::instructions_version(), &origin_of(c), EXPECTS],
    )
}

/// Decides, for each file in order, whether the planner may read it: rules first, then verdicts
/// remembered for the same bytes, then new checks for the rest, at most `cap` of them (the first
/// ones in the order given), [`PARALLEL_CHECKS`] at a time. Every answer from memory and every
/// check made is counted in the session's [`Verdicts`](crate::kernel::verdicts::Verdicts).
pub async fn judge(call: &Call<'_>, candidates: &[Candidate<'_>], cap: usize) -> Vec<Judged> {
    let session = call.session;
    let mut judged: Vec<Option<Judged>> = Vec::with_capacity(candidates.len());
    let mut to_check: Vec<(usize, Fingerprint)> = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        match known(call, c) {
            Ok(j) => judged.push(Some(j)),
            Err(_) if to_check.len() >= cap => judged.push(Some(Judged::held(Hold::OverCap))),
            Err(fingerprint) => {
                to_check.push((i, fingerprint));
                judged.push(None);
            }
        }
    }
    let checks = futures::stream::iter(to_check.into_iter().map(|(i, fingerprint)| {
        let c = &candidates[i];
        async move {
            // Every read of a workspace file labels its bytes untrusted and private: the check
            // is fixed to judge exactly that (CHECK-30).
            let spec = check::CheckSpec::new(
                check::Subject::File {
                    shown: c.shown.to_string(),
                },
                WORKSPACE_FILE,
                origin_of(c),
                EXPECTS,
            );
            let outcome = check::run(session, &spec, c.bytes, call.cancel).await;
            (i, fingerprint, outcome)
        }
    }))
    .buffered(PARALLEL_CHECKS)
    .collect::<Vec<_>>()
    .await;
    for (i, fingerprint, outcome) in checks {
        let c = &candidates[i];
        // Bytes the check refused to judge were judged by nothing: held, and nothing is
        // remembered for them.
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(refused) => {
                tracing::warn!("{refused}");
                judged[i] = Some(Judged::held(Hold::Inconclusive));
                continue;
            }
        };
        let verdict = outcome.verdict;
        if let Some(store) = &session.verdict_store
            && verdict != Verdict::Inconclusive
        {
            // Kept for later sessions off the runtime's workers; a failed write loses only that.
            let (store, key) = (store.clone(), stored_key(call, c, &fingerprint));
            let at = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let _ = tokio::task::spawn_blocking(move || store.keep(key, verdict, at)).await;
        }
        {
            {
                let mut verdicts = session.verdicts.lock().unwrap_or_else(|p| p.into_inner());
                verdicts.made += 1;
                verdicts.keep_with_reasons(
                    c.real.to_path_buf(),
                    fingerprint,
                    verdict,
                    outcome.reasons.clone(),
                );
            }
            let mut state = session.state();
            state.audit.record(
                Gate::Trust,
                if verdict == Verdict::Safe {
                    Decision::Allowed
                } else {
                    Decision::Refused
                },
                format!(
                    "{}: these bytes {} (origin checker)",
                    c.shown,
                    if verdict == Verdict::Safe {
                        "are readable after a clean check"
                    } else {
                        "stay quarantined"
                    }
                ),
            );
        }
        let hold = match verdict {
            Verdict::Safe => None,
            Verdict::Unsafe => Some(Hold::Unsafe),
            Verdict::Inconclusive => Some(Hold::Inconclusive),
        };
        judged[i] = Some(Judged {
            hold,
            by_rule: false,
            verdict: Some(verdict),
            outcome: Some(outcome),
        });
    }
    let judged: Vec<Judged> = judged
        .into_iter()
        .map(|j| j.unwrap_or_else(|| Judged::held(Hold::Inconclusive)))
        .collect();
    show_unsafe_verdicts(call, candidates, &judged);
    judged
}

/// Shows the person every file held back because a check judged its bytes unsafe, with the
/// check's reasons, whether or not a question follows (JUDGE-8): a context that met released
/// content puts none, nobody may be watching, the path may have been offered already this turn,
/// or the verdict came from memory. The screen only: the planner is told [`Hold::reason`].
fn show_unsafe_verdicts(call: &Call<'_>, candidates: &[Candidate<'_>], judged: &[Judged]) {
    let session = call.session;
    for (c, j) in candidates.iter().zip(judged) {
        if j.verdict != Some(Verdict::Unsafe) {
            continue;
        }
        let reasons = match &j.outcome {
            Some(outcome) => outcome.reasons.clone(),
            None => session
                .verdicts
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .reasons(c.real, &policy::fingerprint(c.bytes)),
        };
        session.screen.update(Update::HeldBack {
            path: c.shown.to_string(),
            verdict: Verdict::Unsafe,
            reasons,
        });
    }
}
