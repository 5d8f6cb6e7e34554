//! A proposed change to a file: the original, the proposal, its hunks and a unified diff, and the
//! arithmetic of landing part of it or landing it on text the person has since changed.
//!
//! A proposal may carry content nobody vouched for (a `write_file` with `contents_ref`), so its
//! texts stay labelled. Computing the diff reads them, for the two places they are going anyway:
//! the person's screen (the question) and the file write. Which hunks land is the person's
//! decision. Re-basing onto text the person typed meanwhile compares positions derived from the
//! proposal, so it is only done for a trusted proposal; an untrusted one is refused instead.

use similar::{DiffOp, TextDiff};

use super::label::Label;
use super::labelled::Labelled;

/// Lines of unchanged context around each hunk, as `diff -u` uses.
const CONTEXT: usize = 3;

/// One hunk, in lines (0-based), as the unified diff numbers them minus one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hunk {
    /// First changed line of the original, and how many original lines the hunk replaces.
    pub old_start: usize,
    pub old_lines: usize,
    pub new_start: usize,
    pub new_lines: usize,
}

/// A contiguous replacement of original lines by proposed lines, tagged with its hunk.
#[derive(Clone, Debug)]
struct Change {
    hunk: usize,
    old: std::ops::Range<usize>,
    new: std::ops::Range<usize>,
}

pub struct Proposal {
    original: Labelled<String>,
    proposed: Labelled<String>,
    changes: Vec<Change>,
    pub hunks: Vec<Hunk>,
}

/// Why a proposal could not be landed on text that moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RebaseRefusal {
    /// The person's typing touched a line one of the accepted hunks changes.
    Overlap,
    /// The proposal holds content nobody vouched for: its positions are not compared.
    Untrusted,
}

fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

impl Proposal {
    pub fn new(original: Labelled<String>, proposed: Labelled<String>) -> Proposal {
        let (changes, hunks) = {
            let diff = TextDiff::from_lines(original.value().as_str(), proposed.value().as_str());
            let mut changes = Vec::new();
            let mut hunks = Vec::new();
            for (index, group) in diff.grouped_ops(CONTEXT).iter().enumerate() {
                let mut hunk: Option<Hunk> = None;
                for op in group {
                    if matches!(op, DiffOp::Equal { .. }) {
                        continue;
                    }
                    let (old, new) = (op.old_range(), op.new_range());
                    let h = hunk.get_or_insert(Hunk {
                        old_start: old.start,
                        old_lines: 0,
                        new_start: new.start,
                        new_lines: 0,
                    });
                    h.old_lines = old.end - h.old_start;
                    h.new_lines = new.end - h.new_start;
                    changes.push(Change {
                        hunk: index,
                        old,
                        new,
                    });
                }
                hunks.extend(hunk);
            }
            (changes, hunks)
        };
        Proposal {
            original,
            proposed,
            changes,
            hunks,
        }
    }

    /// The label of what would land: the proposal's, joined with the original's.
    pub fn label(&self) -> Label {
        self.proposed.label().join(self.original.label())
    }

    pub fn original(&self) -> &Labelled<String> {
        &self.original
    }

    pub fn proposed(&self) -> &Labelled<String> {
        &self.proposed
    }

    /// The unified diff, for the person's screen, labelled like the proposal.
    pub fn unified_diff(&self, path: &str) -> Labelled<String> {
        let diff = TextDiff::from_lines(
            self.original.value().as_str(),
            self.proposed.value().as_str(),
        );
        let text = diff
            .unified_diff()
            .context_radius(CONTEXT)
            .header(&format!("a/{path}"), &format!("b/{path}"))
            .to_string();
        Labelled::new(text, self.label())
    }

    /// The text with only the `accepted` hunks applied to the original.
    pub fn with_hunks(&self, accepted: &[usize]) -> Labelled<String> {
        let text = apply(
            &lines(self.original.value()),
            &lines(self.proposed.value()),
            self.changes.iter().filter(|c| accepted.contains(&c.hunk)),
        );
        Labelled::new(text.unwrap_or_default(), self.label())
    }

    /// The `accepted` hunks applied to `current`, the text the person has since typed into, when
    /// their typing touched none of those hunks' lines.
    pub fn rebase(
        &self,
        current: &str,
        accepted: &[usize],
    ) -> Result<Labelled<String>, RebaseRefusal> {
        if !self.label().is_trusted() {
            return Err(RebaseRefusal::Untrusted);
        }
        let old = lines(self.original.value());
        let cur = lines(current);
        // Where each original line sits in the current text, for lines the person left alone.
        let mut map: Vec<Option<usize>> = vec![None; old.len()];
        for op in TextDiff::from_lines(self.original.value().as_str(), current).ops() {
            if let DiffOp::Equal {
                old_index,
                new_index,
                len,
            } = *op
            {
                for k in 0..len {
                    map[old_index + k] = Some(new_index + k);
                }
            }
        }
        let position = |i: usize| -> Option<usize> {
            // An original position (a line index, or the end) is stable when the lines on both
            // sides of it are untouched and still adjacent.
            let before = if i == 0 {
                Some(None)
            } else {
                map.get(i - 1).copied().flatten().map(Some)
            };
            let after = if i == old.len() {
                Some(None)
            } else {
                map.get(i).copied().flatten().map(Some)
            };
            match (before?, after?) {
                (Some(b), Some(a)) if a == b + 1 => Some(a),
                (Some(_), Some(_)) => None,
                (None, Some(a)) => (a == 0).then_some(0),
                (Some(b), None) => (b + 1 == cur.len()).then_some(cur.len()),
                (None, None) => Some(0),
            }
        };
        let chosen: Vec<&Change> = self
            .changes
            .iter()
            .filter(|c| accepted.contains(&c.hunk))
            .collect();
        for c in &chosen {
            let touched = (c.old.start..c.old.end).any(|i| map[i].is_none());
            if touched || position(c.old.start).is_none() || position(c.old.end).is_none() {
                return Err(RebaseRefusal::Overlap);
            }
        }
        let new = lines(self.proposed.value());
        let shifted: Vec<Change> = chosen
            .iter()
            .map(|c| {
                let start = position(c.old.start).unwrap_or(0);
                Change {
                    hunk: c.hunk,
                    old: start..start + c.old.len(),
                    new: c.new.clone(),
                }
            })
            .collect();
        let text = apply(&cur, &new, shifted.iter()).ok_or(RebaseRefusal::Overlap)?;
        Ok(Labelled::new(text, self.label()))
    }

    /// Whether the proposal changes nothing.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}

/// Replaces `base` lines by `new` lines for each change (whose `old` ranges index `base`,
/// ascending and disjoint).
fn apply<'a>(
    base: &[&str],
    new: &[&str],
    changes: impl Iterator<Item = &'a Change>,
) -> Option<String> {
    let mut out = String::new();
    let mut at = 0;
    for c in changes {
        if c.old.start < at || c.old.end > base.len() {
            return None;
        }
        out.extend(base[at..c.old.start].iter().copied());
        out.extend(new.get(c.new.clone())?.iter().copied());
        at = c.old.end;
    }
    out.extend(base[at..].iter().copied());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Labelled<String> {
        Labelled::new(s.to_string(), Label::TRUSTED_PRIVATE)
    }

    fn value(l: &Labelled<String>) -> &str {
        l.value()
    }

    /// Thirty distinct lines, `l00` to `l29`.
    fn original() -> String {
        (0..30).map(|i| format!("l{i:02}\n")).collect()
    }

    /// The original with the lines at `at` replaced by `X..`.
    fn changed(at: &[usize]) -> String {
        (0..30)
            .map(|i| {
                if at.contains(&i) {
                    format!("X{i:02}\n")
                } else {
                    format!("l{i:02}\n")
                }
            })
            .collect()
    }

    /// Three changes more than six unchanged lines apart: three hunks.
    fn three_hunks() -> Proposal {
        Proposal::new(t(&original()), t(&changed(&[0, 14, 28])))
    }

    // Verifies: WRITE-2
    #[test]
    fn proposal_hunks_are_the_unified_diffs_hunks() {
        let p = three_hunks();
        assert_eq!(p.hunks.len(), 3, "{:?}", p.hunks);
        assert_eq!(
            p.hunks[1],
            Hunk {
                old_start: 14,
                old_lines: 1,
                new_start: 14,
                new_lines: 1
            }
        );
        let diff = p.unified_diff("f.txt");
        assert_eq!(
            value(&diff)
                .lines()
                .filter(|l| l.starts_with("@@ "))
                .count(),
            3
        );
        // Changes six lines apart share their context: one hunk.
        let close = Proposal::new(t(&original()), t(&changed(&[3, 10])));
        assert_eq!(close.hunks.len(), 1);
    }

    // Verifies: WRITE-2
    #[test]
    fn proposal_lands_exactly_the_accepted_hunks() {
        let p = three_hunks();
        assert_eq!(value(&p.with_hunks(&[0, 2])), changed(&[0, 28]));
        assert_eq!(value(&p.with_hunks(&[1])), changed(&[14]));
        assert_eq!(value(&p.with_hunks(&[])), original());
    }

    // Verifies: WRITE-3
    #[test]
    fn proposal_rebases_past_typing_elsewhere_and_refuses_typing_inside_a_hunk() {
        let p = three_hunks();
        // The person typed a new line after l20, away from every hunk.
        let typed = original().replace("l20\n", "l20\nTYPED\n");
        let rebased = p.rebase(&typed, &[0, 1, 2]).expect("rebases");
        assert_eq!(
            value(&rebased),
            changed(&[0, 14, 28]).replace("l20\n", "l20\nTYPED\n")
        );
        // The person changed l14, which hunk 1 changes too.
        let clash = original().replace("l14\n", "mine\n");
        assert_eq!(
            p.rebase(&clash, &[0, 1, 2]).err(),
            Some(RebaseRefusal::Overlap)
        );
        // Hunk 1 refused by the person: the others still land around their typing.
        let rest = p
            .rebase(&clash, &[0, 2])
            .expect("the other hunks are untouched");
        assert_eq!(value(&rest), changed(&[0, 28]).replace("l14\n", "mine\n"));
    }

    // Verifies: WRITE-3
    #[test]
    fn proposal_with_untrusted_content_is_never_rebased() {
        let p = Proposal::new(
            t(&original()),
            Labelled::new("z\n".into(), Label::UNTRUSTED_PUBLIC),
        );
        assert_eq!(
            p.rebase(&original(), &[0]).err(),
            Some(RebaseRefusal::Untrusted)
        );
        assert_eq!(p.label(), Label::UNTRUSTED_PRIVATE);
    }
}
