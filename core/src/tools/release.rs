//! The one way a question that lets the planner read bytes is built (REL-1).
//!
//! `vet_content`, `read_output`, the vouch offer on a read (`trustRead`) and the run question's
//! standing approval all release bytes to the planner on a person's yes. Each builds its question
//! here, from a [`Release`] that cannot be made without the check's outcome, so no prompt can leave
//! a part out:
//! - the check came first, and its verdict is drawn on the question and in the words of every
//!   approving option;
//! - the question carries every byte a yes releases, up to [`SHOWN_MAX`]; past it, it carries the
//!   whole lines that fit, says how many lines and bytes it leaves out, and a yes releases only
//!   what it carried ([`Prepared::released`]), the rest staying quarantined;
//! - every approving option says in its own words that the agent will read what it releases, and
//!   one that lasts the session says so.
//!
//! The run question's standing approval releases output that does not exist yet: it has no bytes
//! to show or check, so only its option's words come from here ([`standing_plan_option`]), and the
//! run question draws the verdict on every file the line reads that a check held back.
//!
//! What the planner is told after a release names who released it ([`released_by`]): the person,
//! or a check under auto-vetting.

use crate::kernel::labelled::Labelled;
use crate::kernel::policy::{self, Endorsement, ReleasePart, Verdict};
use crate::kernel::slot::human_size;
use crate::screen::{Question, QuestionKind, Subject};

/// Most bytes a release question carries. It is at least the bound on a file read
/// (`workspace_file::READ_LIMIT`), so a file is always shown whole; only a run's output kept past
/// it (or a fetched body) can be larger.
pub const SHOWN_MAX: usize = 4 * 1024 * 1024;

const _: () = assert!(SHOWN_MAX as u64 >= crate::workspace_file::READ_LIMIT);

/// What stood between the bytes and the question. Made only by its constructors, from a check's
/// outcome, a verdict the content-trust helper holds for exactly these bytes, or the person's own
/// switch: no caller can write a verdict of its own.
#[derive(Clone, Debug)]
pub struct Screening(Screened);

#[derive(Clone, Debug)]
enum Screened {
    /// A check read what the answer covers: now (with its sentence) or earlier this session for
    /// exactly these bytes (without).
    Checked {
        verdict: Verdict,
        reasons: Option<Labelled<String>>,
    },
    /// The person turned read checks off (`vetting.reads: false`), so a read asks without one
    /// (CONTRACT §4.3). Only the vouch offer on a read is ever built with it.
    ChecksOff,
}

impl Screening {
    /// From a check run now.
    pub fn checked(outcome: crate::check::CheckOutcome) -> Screening {
        Screening(Screened::Checked {
            verdict: outcome.verdict,
            reasons: outcome.reasons,
        })
    }

    /// From what the content-trust helper decided for a file: a check made now (with its
    /// sentence) or a verdict remembered for exactly these bytes; `None` where no check read them
    /// and read checks are on, so no release question may be put.
    pub fn judged(judged: super::content_trust::Judged, checks_on: bool) -> Option<Screening> {
        match (judged.verdict, checks_on) {
            (Some(verdict), _) => Some(Screening(Screened::Checked {
                verdict,
                reasons: judged.outcome.and_then(|o| o.reasons),
            })),
            (None, false) => Some(Screening(Screened::ChecksOff)),
            (None, true) => None,
        }
    }

    /// The words beside an approving option.
    fn words(&self) -> &'static str {
        match &self.0 {
            Screened::Checked {
                verdict: Verdict::Safe,
                ..
            } => "check: nothing found",
            Screened::Checked {
                verdict: Verdict::Unsafe,
                ..
            } => "check: UNSAFE",
            Screened::Checked {
                verdict: Verdict::Inconclusive,
                ..
            } => "check: did not complete",
            Screened::ChecksOff => "no check: read checks are off",
        }
    }
}

/// What one approving option lets the planner read.
#[derive(Clone, Debug)]
pub enum Grant {
    /// The bytes shown, once.
    Once,
    /// A picture (or PDF) the person opens from a private copy, once: the question carries no
    /// text of it, and a yes releases the whole file the copy holds.
    PictureOnce { media_type: String },
    /// A trust rule on the file: the bytes shown, and the file as it is later this session.
    TrustFile,
    /// A plan allowed for the rest of the session: the bytes shown, and what it prints each time
    /// it runs again.
    PlanForSession { line: String },
    /// The standing key (seed 000): the bytes shown, once, and auto-vetting turned on from here,
    /// recorded in `~/.bravebot/vetting`. Offered only where the check completed and found
    /// nothing: [`Release::prepare`] drops it from any other question (VET-20).
    OnceThenAutoVetting,
}

/// One release question, before it is built.
pub struct Release<'a> {
    pub kind: QuestionKind,
    pub title: String,
    pub why: Option<String>,
    /// Where the bytes came from, in bravebot's words.
    pub origin: String,
    /// Every byte a yes could release.
    pub content: &'a Labelled<Vec<u8>>,
    pub screening: Screening,
    /// The approving options, each with its id, in the order drawn.
    pub grants: Vec<(&'static str, Grant)>,
    /// The fields of the subject that are the caller's own (path, command, header, question, a
    /// notice); content, verdict and origin are filled in here.
    pub subject: Subject,
}

/// A built release question and the bytes a yes to it releases.
pub struct Prepared {
    pub question: Question,
    /// What the question carried: all a yes may release.
    pub released: Labelled<Vec<u8>>,
    /// Lines and bytes the question left out, which stay quarantined.
    pub omitted: Option<(usize, usize)>,
}

impl Release<'_> {
    pub fn prepare(self) -> Prepared {
        let ReleasePart {
            bytes,
            text,
            lines,
            size,
            omitted_lines,
            omitted_bytes,
        } = policy::release_part(self.content, SHOWN_MAX);
        let picture = self
            .grants
            .iter()
            .any(|(_, g)| matches!(g, Grant::PictureOnce { .. }));
        // A picture is shown as the copy the caller names, whole, never as text.
        let (bytes, text, omitted) = if picture {
            (self.content.clone(), None, None)
        } else {
            let omitted = (omitted_bytes > 0).then_some((omitted_lines, omitted_bytes));
            (bytes, Some(text), omitted)
        };
        let size = if picture {
            policy::measure(self.content).1
        } else {
            size
        };
        let what = amount(lines, size);
        let screening = self.screening.words();
        // The standing key turns on the mode in which a clean check answers for the person, so it
        // is offered only under a check that completed and found nothing (seed 000).
        let clean = matches!(
            self.screening.0,
            Screened::Checked {
                verdict: Verdict::Safe,
                ..
            }
        );
        let grants: Vec<_> = self
            .grants
            .into_iter()
            .filter(|(_, g)| clean || !matches!(g, Grant::OnceThenAutoVetting))
            .collect();
        // A trust rule is written by an `allow_once` answer on the wire (CONTRACT §4.7 asks for
        // one on every question): the first approving option is that one.
        let mut question = Question::approve(self.kind, self.title)
            .why_given(self.why)
            .subject(Subject {
                content: text,
                origin: Some(self.origin),
                ..self.subject
            });
        for (n, (id, grant)) in grants.iter().enumerate() {
            // The standing key releases this slot once: what lasts is the recorded choice, which
            // its words say, and no editor may file it under "for the rest of this session".
            let lasts = n > 0 && matches!(grant, Grant::TrustFile | Grant::PlanForSession { .. });
            question = question.allow(
                *id,
                format!(
                    "{} [{screening}]",
                    option_words(grant, lines, size, omitted.is_some())
                ),
                lasts,
            );
        }
        let cut = omitted.map(|(l, b)| {
            format!(
                "Shown here: the first {what}. Not shown: {} after them. A yes lets the agent read only what is shown; the rest stays quarantined.",
                amount(l, b)
            )
        });
        let notice = question.subject.notice.take();
        let (verdict, verdict_text) = match self.screening.0 {
            Screened::Checked { verdict, reasons } => (Some(verdict), reasons),
            Screened::ChecksOff => (None, None),
        };
        let question = question
            .reject("keep", "Keep it quarantined")
            .notice_and_cut(notice, cut)
            .checked(verdict, verdict_text);
        Prepared {
            question,
            released: bytes,
            omitted,
        }
    }
}

/// "340 lines (12.1 KiB)".
fn amount(lines: usize, bytes: usize) -> String {
    let noun = if lines == 1 { "line" } else { "lines" };
    format!("{lines} {noun} ({})", human_size(bytes))
}

/// The approving option's own words: that the agent will read what it releases, how much, and for
/// how long.
fn option_words(grant: &Grant, lines: usize, size: usize, cut: bool) -> String {
    let what = if cut {
        format!("the {} shown, none of the rest", amount(lines, size))
    } else if lines == 1 {
        format!("its one line ({})", human_size(size))
    } else {
        format!("all {}", amount(lines, size))
    };
    match grant {
        Grant::Once => format!("Show it to the agent this once: it will read {what}"),
        Grant::PictureOnce { media_type } => format!(
            "Show the picture to the agent this once: it will see the whole {media_type} file ({})",
            human_size(size)
        ),
        Grant::TrustFile => format!(
            "Trust this file for the session: the agent will read {what}, and the file whenever it reads it again"
        ),
        Grant::PlanForSession { line } => format!(
            "Allow {line} for the rest of this session: the agent will read {what}, and everything it prints each time it runs"
        ),
        Grant::OnceThenAutoVetting => format!(
            "Show it, and from now on let a clean check answer for me (writes {}): the agent will read {what} now, and what a clean check passes later without asking",
            crate::vetting::RECORD_SHOWN
        ),
    }
}

/// The run question's standing approval, whose output does not exist yet: its words say that the
/// agent will read what the plan prints for the rest of the session.
pub fn standing_plan_option(question: Question, id: &str) -> Question {
    question.allow_always(
        id,
        "Allow this exact plan for the rest of this session: the agent will read everything it prints each time it runs",
    )
}

/// The approving grants of a release question that shows bytes once: `show`, and the standing key
/// (`auto`) where the session records the person's choice, which an incognito session does not
/// (VET-20, VET-22). [`Release::prepare`] keeps the key only under a clean check.
pub fn once_grants(session: &crate::session::Session, once: Grant) -> Vec<(&'static str, Grant)> {
    let mut grants = vec![("show", once)];
    if session.vetting_record().is_some() {
        grants.push(("auto", Grant::OnceThenAutoVetting));
    }
    grants
}

/// The person chose the standing key: records `on` in `~/.bravebot/vetting` and turns the mode on
/// for this session at once, announced in the chat (VET-20). What the person is told when the
/// record could not be written, for the tool result's summary; the mode then stays as it was,
/// since the key's promise is a recorded choice.
pub async fn take_standing_key(session: &crate::session::Session) -> Option<String> {
    let state = session.vetting_record()?.clone();
    let written =
        tokio::task::spawn_blocking(move || crate::vetting::write_record(&state, true)).await;
    let error = match written {
        Ok(Ok(())) => {
            session.set_auto_vetting(true, crate::vetting::RECORD_SHOWN);
            return None;
        }
        Ok(Err(e)) => e.to_string(),
        Err(e) => e.to_string(),
    };
    session.state().audit.record(
        crate::kernel::audit::Gate::Trust,
        crate::kernel::audit::Decision::Refused,
        format!(
            "auto-vetting not turned on: {} could not be written",
            crate::vetting::RECORD_SHOWN
        ),
    );
    Some(format!(
        "auto-vetting NOT turned on: {} could not be written ({error})",
        crate::vetting::RECORD_SHOWN
    ))
}

/// Who let the bytes through, for the planner: it must never be told a person approved what a
/// check released.
pub fn released_by(endorsement: Endorsement) -> &'static str {
    match endorsement {
        Endorsement::Person => "released once by the person, who was shown it",
        Endorsement::AutoVet => {
            "released once by an automatic check (auto-vetting), not by the person: nobody read it"
        }
    }
}

/// What the planner is told of a release that left part of the slot quarantined.
pub fn omitted_words(omitted: Option<(usize, usize)>) -> String {
    match omitted {
        None => String::new(),
        Some((lines, bytes)) => format!(
            " Only its first part was shown and released: {} after it stay quarantined.",
            amount(lines, bytes)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::label::Label;
    use crate::screen::OptionKind;

    fn content(s: &str) -> Labelled<Vec<u8>> {
        Labelled::new(s.as_bytes().to_vec(), Label::UNTRUSTED_PRIVATE)
    }

    fn release(
        c: &Labelled<Vec<u8>>,
        screening: Screening,
        grants: Vec<(&'static str, Grant)>,
    ) -> Prepared {
        Release {
            kind: QuestionKind::VetContent,
            title: "t".into(),
            why: None,
            origin: "the file a.md".into(),
            content: c,
            screening,
            grants,
            subject: Subject::default(),
        }
        .prepare()
    }

    // Verifies: VET-20
    #[test]
    fn the_standing_key_is_offered_only_under_a_clean_check() {
        let c = content("one\ntwo\n");
        let checked = |verdict| {
            Screening(Screened::Checked {
                verdict,
                reasons: None,
            })
        };
        let ids = |p: &Prepared| -> Vec<String> {
            p.question.options.iter().map(|o| o.id.clone()).collect()
        };
        let grants = || vec![("show", Grant::Once), ("auto", Grant::OnceThenAutoVetting)];
        for screening in [
            checked(Verdict::Unsafe),
            checked(Verdict::Inconclusive),
            Screening(Screened::ChecksOff),
        ] {
            let p = release(&c, screening.clone(), grants());
            assert_eq!(ids(&p), ["show", "keep"], "{screening:?}");
        }
        let p = release(&c, checked(Verdict::Safe), grants());
        assert_eq!(ids(&p), ["show", "auto", "keep"]);
        let key = &p.question.options[1];
        assert_eq!(key.kind, OptionKind::AllowOnce);
        assert_eq!(
            key.name,
            "Show it, and from now on let a clean check answer for me (writes ~/.bravebot/vetting): the agent will read all 2 lines (8 B) now, and what a clean check passes later without asking [check: nothing found]"
        );
    }

    // Verifies: REL-1, RUNTOOL-12
    #[test]
    fn every_approving_option_says_the_agent_reads_how_much_and_the_verdict() {
        let c = content(&"line\n".repeat(500));
        let p = release(
            &c,
            Screening(Screened::Checked {
                verdict: Verdict::Unsafe,
                reasons: None,
            }),
            vec![
                ("show", Grant::Once),
                (
                    "session",
                    Grant::PlanForSession {
                        line: "make".into(),
                    },
                ),
            ],
        );
        let names: Vec<&str> = p.question.options.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "Show it to the agent this once: it will read all 500 lines (2.4 KiB) [check: UNSAFE]",
                "Allow make for the rest of this session: the agent will read all 500 lines (2.4 KiB), and everything it prints each time it runs [check: UNSAFE]",
                "Keep it quarantined",
            ]
        );
        assert_eq!(p.question.options[0].kind, OptionKind::AllowOnce);
        assert_eq!(p.question.options[1].kind, OptionKind::AllowAlways);
        assert_eq!(p.question.subject.verdict, Some(Verdict::Unsafe));
        assert!(p.omitted.is_none());
        assert_eq!(
            policy::measure(&p.released),
            (500, 2500),
            "all of it is carried and released"
        );
        assert_eq!(p.question.subject.notice, None);
    }

    // Verifies: REL-1
    #[test]
    fn a_picture_is_carried_as_no_text_and_its_option_says_the_agent_sees_the_whole_file() {
        let c = Labelled::new(
            vec![0x89, b'P', b'N', b'G', b'\n', 0, 1, 2],
            Label::UNTRUSTED_PRIVATE,
        );
        let p = release(
            &c,
            Screening(Screened::Checked {
                verdict: Verdict::Inconclusive,
                reasons: None,
            }),
            vec![(
                "show",
                Grant::PictureOnce {
                    media_type: "image/png".into(),
                },
            )],
        );
        assert!(p.question.subject.content.is_none());
        assert_eq!(
            p.question.options[0].name,
            "Show the picture to the agent this once: it will see the whole image/png file (8 B) [check: did not complete]"
        );
        assert_eq!(policy::measure(&p.released).1, 8, "the whole picture");
        assert!(p.omitted.is_none());
    }

    // Verifies: REL-2
    #[test]
    fn past_the_bound_the_question_says_what_it_leaves_out_and_releases_only_what_it_shows() {
        let line = "x".repeat(1023) + "\n";
        let c = content(&line.repeat(SHOWN_MAX / 1024 + 3));
        let p = release(
            &c,
            Screening(Screened::Checked {
                verdict: Verdict::Safe,
                reasons: None,
            }),
            vec![("show", Grant::Once)],
        );
        assert_eq!(p.omitted, Some((3, 3072)));
        assert_eq!(policy::measure(&p.released).1, SHOWN_MAX);
        let notice = p.question.subject.notice.clone().unwrap_or_default();
        assert!(
            notice.contains("Not shown: 3 lines (3.0 KiB)")
                && notice.contains("only what is shown"),
            "{notice}"
        );
        assert!(
            p.question.options[0].name.starts_with("Show it to the agent this once: it will read the 4096 lines (4.0 MiB) shown, none of the rest"),
            "{}",
            p.question.options[0].name
        );
    }
}
