//! What the session remembers of checks: a verdict for the exact bytes it judged, never for a
//! path (JUDGE-2). Pure data over fingerprints and verdicts, beside the trust map.

use std::path::{Path, PathBuf};

use crate::kernel::labelled::Labelled;
use crate::kernel::policy::{Fingerprint, Verdict};

/// A verdict the session remembers, for the exact bytes it judged.
#[derive(Clone, Debug)]
pub struct Remembered {
    pub path: PathBuf,
    pub fingerprint: Fingerprint,
    pub verdict: Verdict,
    /// The check's own sentence about those bytes (untrusted), for the person's screen.
    pub reasons: Option<Labelled<String>>,
}

/// The session's memory of checks: verdicts by fingerprint, and what they cost.
#[derive(Clone, Debug, Default)]
pub struct Verdicts {
    remembered: Vec<Remembered>,
    /// Checks sent to the model.
    pub made: u64,
    /// Checks answered from memory because the same bytes were judged before.
    pub saved: u64,
}

impl Verdicts {
    /// The verdict remembered for exactly these bytes of `path`, if any.
    pub fn recall(&self, path: &Path, fingerprint: &Fingerprint) -> Option<Verdict> {
        self.remembered
            .iter()
            .rev()
            .find(|r| r.path == path && r.fingerprint == *fingerprint)
            .map(|r| r.verdict)
    }

    /// The check's reasons remembered with the verdict for exactly these bytes of `path`.
    pub fn reasons(&self, path: &Path, fingerprint: &Fingerprint) -> Option<Labelled<String>> {
        self.remembered
            .iter()
            .rev()
            .find(|r| r.path == path && r.fingerprint == *fingerprint)
            .and_then(|r| r.reasons.clone())
    }

    /// Keeps a completed verdict. An inconclusive one says nothing about the bytes (a timeout, a
    /// refusal by the endpoint), so it is not kept and the next read checks again.
    pub fn keep(&mut self, path: PathBuf, fingerprint: Fingerprint, verdict: Verdict) {
        self.keep_with_reasons(path, fingerprint, verdict, None);
    }

    /// Keeps a completed verdict with the check's reasons, shown to the person wherever the file
    /// is held back or vouched for later (JUDGE-8, PROTO-29).
    pub fn keep_with_reasons(
        &mut self,
        path: PathBuf,
        fingerprint: Fingerprint,
        verdict: Verdict,
        reasons: Option<Labelled<String>>,
    ) {
        if verdict == Verdict::Inconclusive {
            return;
        }
        self.remembered
            .retain(|r| !(r.path == path && r.fingerprint == fingerprint));
        self.remembered.push(Remembered {
            path,
            fingerprint,
            verdict,
            reasons,
        });
    }

    /// The paths whose current bytes were last judged safe, for status.
    pub fn passed(&self) -> Vec<&Path> {
        let mut out: Vec<&Path> = self
            .remembered
            .iter()
            .filter(|r| r.verdict == Verdict::Safe)
            .map(|r| r.path.as_path())
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::label::Label;
    use crate::kernel::policy;

    fn bytes(s: &str) -> Labelled<Vec<u8>> {
        Labelled::new(s.as_bytes().to_vec(), Label::UNTRUSTED_PRIVATE)
    }

    // Verifies: JUDGE-2
    #[test]
    fn verdicts_are_kept_by_fingerprint_and_an_inconclusive_one_is_not() {
        let mut v = Verdicts::default();
        let a = Path::new("/w/a.md");
        let first = policy::fingerprint(&bytes("one\n"));
        let changed = policy::fingerprint(&bytes("two\n"));
        assert_ne!(first, changed);
        v.keep(a.to_path_buf(), first, Verdict::Safe);
        assert_eq!(v.recall(a, &first), Some(Verdict::Safe));
        assert_eq!(v.recall(a, &changed), None, "other bytes are judged anew");
        assert_eq!(
            v.recall(Path::new("/w/b.md"), &first),
            None,
            "the same bytes in another file are another file's"
        );
        v.keep(a.to_path_buf(), changed, Verdict::Inconclusive);
        assert_eq!(
            v.recall(a, &changed),
            None,
            "an inconclusive verdict says nothing"
        );
        v.keep(a.to_path_buf(), changed, Verdict::Unsafe);
        assert_eq!(v.recall(a, &changed), Some(Verdict::Unsafe));
        assert_eq!(v.passed(), vec![a]);
    }
}
