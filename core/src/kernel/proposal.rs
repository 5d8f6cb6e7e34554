//! A proposed change to a file: the original, the proposal, its hunks and a unified diff, and the
//! arithmetic of landing part of it or landing it on text the person has since changed.
//!
//! A proposal may carry content nobody vouched for (a `write_file` with `contents_ref`), so its
//! texts stay labelled. Computing the diff reads them, for the two places they are going anyway:
//! the person's screen (the question) and the file write. Which hunks land is the person's
//! decision. Re-basing onto text the person typed meanwhile compares positions derived from the
//! proposal, so it is only done for a trusted proposal; an untrusted one is refused instead.

use std::ops::Range;
use std::sync::Arc;

use similar::{DiffOp, TextDiff};

use super::label::Label;
use super::labelled::Labelled;

/// Lines of unchanged context the unified diff shows around each hunk at most, as `diff -u` uses.
/// Context never joins two hunks: between two changes it is shared out so that neither hunk's
/// context reaches into the other's.
const CONTEXT: usize = 3;

/// One hunk, in lines (0-based), as the unified diff numbers them minus one. A hunk is a run of
/// changed lines with no unchanged line inside it: two changes are one hunk only when they touch,
/// so a person can keep or leave out each change an editor's diff draws apart.
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
    old: Range<usize>,
    new: Range<usize>,
}

pub struct Proposal {
    /// Shared, so the question can carry both texts without copying them (WRITE-60).
    original: Labelled<Arc<String>>,
    proposed: Labelled<Arc<String>>,
    changes: Vec<Change>,
    pub hunks: Vec<Hunk>,
    /// The unified diff's `@@` blocks, rendered from the one line diff `new` ran.
    blocks: String,
}

/// One whole-line replacement of an editor's buffer: the original lines `old` (0-based, end
/// exclusive) become `new_text`. Positions are lines of the original text the edit is made on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineEdit {
    pub old: Range<usize>,
    pub new_text: String,
}

/// The line edits that turn `original` into `proposed`, one per changed run of the line diff.
/// Used where no proposal holds the diff already (the person's own version of a change).
pub fn line_edits(original: &str, proposed: &str) -> Vec<LineEdit> {
    let new = lines(proposed);
    TextDiff::from_lines(original, proposed)
        .ops()
        .iter()
        .filter(|op| !matches!(op, DiffOp::Equal { .. }))
        .map(|op| LineEdit {
            old: op.old_range(),
            new_text: new
                .get(op.new_range())
                .map(|l| l.concat())
                .unwrap_or_default(),
        })
        .collect()
}

/// Where a line of `text` starts as an LSP position `(line, character)`, for a line index up to
/// one past the last line break: past the last break of a text that does not end in one, the end
/// of its last line, with characters counted in UTF-16 code units or, when `utf16` is false,
/// bytes. Made once per text, so converting many edits reads the text once.
pub struct LinePositions {
    breaks: usize,
    last_line_len: usize,
}

impl LinePositions {
    pub fn new(text: &str, utf16: bool) -> LinePositions {
        let breaks = line_breaks(text.as_bytes());
        let last = memchr::memrchr(b'\n', text.as_bytes()).map_or(text, |i| &text[i + 1..]);
        let last_line_len = if utf16 {
            last.encode_utf16().count()
        } else {
            last.len()
        };
        LinePositions {
            breaks,
            last_line_len,
        }
    }

    pub fn position(&self, line: usize) -> (u32, u32) {
        let as_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        if line <= self.breaks {
            (as_u32(line), 0)
        } else {
            (as_u32(self.breaks), as_u32(self.last_line_len))
        }
    }
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

/// Each hunk's proposed lines, `new_start` up to `new_start + new_lines` of `proposed` with their
/// line breaks, for an editor that rebuilds the proposal from its own copy of the original
/// (WRITE-61). One pass over the line breaks up to the last hunk; the hunks are in order.
pub fn hunk_texts<'a>(proposed: &'a str, hunks: &[Hunk]) -> Vec<&'a str> {
    let mut breaks = memchr::memchr_iter(b'\n', proposed.as_bytes());
    let (mut line, mut at) = (0, 0);
    let mut start_of = |target: usize| {
        while line < target {
            at = breaks.next().map_or(proposed.len(), |i| i + 1);
            line += 1;
        }
        at
    };
    hunks
        .iter()
        .map(|h| {
            let from = start_of(h.new_start);
            &proposed[from..start_of(h.new_start + h.new_lines)]
        })
        .collect()
}

/// The line breaks in `bytes`, counted by a vector scan.
fn line_breaks(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

/// Bytes compared a block at a time before the first differing block is looked at byte by
/// byte: comparing equal blocks is a vector compare, where a byte loop is one byte a step.
const BLOCK: usize = 256;

/// The length of the longest common prefix of `a` and `b`.
fn shared_prefix(a: &[u8], b: &[u8]) -> usize {
    let room = a.len().min(b.len());
    let mut same = 0;
    while same + BLOCK <= room && a[same..same + BLOCK] == b[same..same + BLOCK] {
        same += BLOCK;
    }
    same + a[same..room]
        .iter()
        .zip(&b[same..room])
        .take_while(|(x, y)| x == y)
        .count()
}

/// The length of the longest common suffix of `a` and `b`.
fn shared_suffix(a: &[u8], b: &[u8]) -> usize {
    let room = a.len().min(b.len());
    let (a, b) = (&a[a.len() - room..], &b[b.len() - room..]);
    let mut same = 0;
    while same + BLOCK <= room
        && a[room - same - BLOCK..room - same] == b[room - same - BLOCK..room - same]
    {
        same += BLOCK;
    }
    same + a[..room - same]
        .iter()
        .rev()
        .zip(b[..room - same].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// The part of two texts a line diff needs to look at: their common leading and trailing lines
/// are set aside by comparing bytes, keeping up to `CONTEXT` of each for the diff's context.
#[derive(Clone, Copy, Debug)]
struct Window {
    /// Lines of both texts before the window.
    lines_before: usize,
    /// Byte ranges of the window in the original and in the proposal.
    old: (usize, usize),
    new: (usize, usize),
}

impl Window {
    fn of(old: &str, new: &str) -> Window {
        let (o, n) = (old.as_bytes(), new.as_bytes());
        let same = shared_prefix(o, n);
        // Whole lines only: the prefix ends after the last line break both share.
        let prefix = memchr::memrchr(b'\n', &o[..same]).map_or(0, |i| i + 1);
        let room = (o.len() - prefix).min(n.len() - prefix);
        let mut suffix = shared_suffix(&o[o.len() - room..], &n[n.len() - room..]);
        // The suffix starts a line in both texts.
        loop {
            let (so, sn) = (o.len() - suffix, n.len() - suffix);
            let starts = |t: &[u8], at: usize| at == prefix || t[at - 1] == b'\n';
            if suffix == 0 || (starts(o, so) && starts(n, sn)) {
                break;
            }
            suffix = match memchr::memchr(b'\n', &o[so..]) {
                Some(i) => o.len() - (so + i + 1),
                None => 0,
            };
        }
        // Keep up to CONTEXT shared lines on each side, for the unified diff's context.
        let mut start = prefix;
        let mut kept = 0;
        while kept < CONTEXT && start > 0 {
            start = memchr::memrchr(b'\n', &o[..start - 1]).map_or(0, |i| i + 1);
            kept += 1;
        }
        let lines_before = line_breaks(&o[..start]);
        let mut end = suffix;
        let mut kept = 0;
        while kept < CONTEXT && end > 0 {
            let from = o.len() - end;
            end = match memchr::memchr(b'\n', &o[from..]) {
                Some(i) => o.len() - (from + i + 1),
                None => 0,
            };
            kept += 1;
        }
        Window {
            lines_before,
            old: (start, o.len() - end),
            new: (start, n.len() - end),
        }
    }
}

impl Proposal {
    pub fn new(original: Labelled<String>, proposed: Labelled<String>) -> Proposal {
        let (changes, hunks, blocks) = {
            let (old, new) = (original.value().as_str(), proposed.value().as_str());
            let window = Window::of(old, new);
            let (old_w, new_w) = (
                &old[window.old.0..window.old.1],
                &new[window.new.0..window.new.1],
            );
            let diff = TextDiff::from_lines(old_w, new_w);
            let ops = whole_ops(diff.ops(), window, old);
            let blocks = render_blocks(&ops, window, &lines(old_w), &lines(new_w));
            let mut changes = Vec::new();
            let mut hunks = Vec::new();
            for run in runs(&ops) {
                let index = hunks.len();
                let (first, last) = (ops[run.start], ops[run.end - 1]);
                let (old_start, new_start) = (first.old_range().start, first.new_range().start);
                hunks.push(Hunk {
                    old_start,
                    old_lines: last.old_range().end - old_start,
                    new_start,
                    new_lines: last.new_range().end - new_start,
                });
                changes.extend(ops[run].iter().map(|op| Change {
                    hunk: index,
                    old: op.old_range(),
                    new: op.new_range(),
                }));
            }
            (changes, hunks, blocks)
        };
        let shared = |text: Labelled<String>| {
            let label = text.label();
            Labelled::new(Arc::new(text.into_value()), label)
        };
        Proposal {
            original: shared(original),
            proposed: shared(proposed),
            changes,
            hunks,
            blocks,
        }
    }

    /// The label of what would land: the proposal's, joined with the original's.
    pub fn label(&self) -> Label {
        self.proposed.label().join(self.original.label())
    }

    /// The original, shared: a clone is a reference, not a copy of the text.
    pub fn original(&self) -> &Labelled<Arc<String>> {
        &self.original
    }

    /// The proposal, shared like the original.
    pub fn proposed(&self) -> &Labelled<Arc<String>> {
        &self.proposed
    }

    /// The unified diff, for the person's screen, labelled like the proposal: one `@@` block per
    /// hunk, in the same order, each with up to `CONTEXT` unchanged lines on either side.
    pub fn unified_diff(&self, path: &str) -> Labelled<String> {
        let mut text = String::new();
        if !self.blocks.is_empty() {
            text.reserve(self.blocks.len() + 2 * path.len() + 16);
            text.push_str(&format!("--- a/{path}\n+++ b/{path}\n"));
            text.push_str(&self.blocks);
        }
        Labelled::new(text, self.label())
    }

    /// The edits that land the `accepted` hunks on the original in an editor's buffer, from the
    /// diff `new` ran, labelled like the proposal: their text goes only into that buffer.
    pub fn line_edits(&self, accepted: &[usize]) -> Labelled<Vec<LineEdit>> {
        let new = self.proposed.value().as_str();
        // One pass over the proposal's line breaks, in step with the changes (ascending).
        let mut breaks = new.match_indices('\n').map(|(i, _)| i + 1);
        let (mut line, mut at) = (0, 0);
        let mut offset_of = |target: usize| -> usize {
            while line < target {
                at = breaks.next().unwrap_or(new.len());
                line += 1;
            }
            at
        };
        let mut edits = Vec::new();
        for c in &self.changes {
            let (from, to) = (offset_of(c.new.start), offset_of(c.new.end));
            if accepted.contains(&c.hunk) {
                edits.push(LineEdit {
                    old: c.old.clone(),
                    new_text: new[from..to].to_string(),
                });
            }
        }
        Labelled::new(edits, self.label())
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

/// The ops of the window's diff as ops of the whole texts: shifted past the lines before the
/// window, with the shared lines on either side joined to the window's first and last `Equal`.
fn whole_ops(window_ops: &[DiffOp], window: Window, old: &str) -> Vec<DiffOp> {
    let before = window.lines_before;
    let mut ops: Vec<DiffOp> = Vec::with_capacity(window_ops.len() + 2);
    let push = |ops: &mut Vec<DiffOp>, op: DiffOp| match (ops.last_mut(), op) {
        (Some(DiffOp::Equal { len, .. }), DiffOp::Equal { len: more, .. }) => *len += more,
        (_, DiffOp::Equal { len: 0, .. }) => {}
        _ => ops.push(op),
    };
    push(
        &mut ops,
        DiffOp::Equal {
            old_index: 0,
            new_index: 0,
            len: before,
        },
    );
    for op in window_ops {
        let shifted = match *op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => DiffOp::Equal {
                old_index: old_index + before,
                new_index: new_index + before,
                len,
            },
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => DiffOp::Delete {
                old_index: old_index + before,
                old_len,
                new_index: new_index + before,
            },
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => DiffOp::Insert {
                old_index: old_index + before,
                new_index: new_index + before,
                new_len,
            },
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => DiffOp::Replace {
                old_index: old_index + before,
                old_len,
                new_index: new_index + before,
                new_len,
            },
        };
        push(&mut ops, shifted);
    }
    let count = |t: &str| t.bytes().filter(|b| *b == b'\n').count();
    let after = count(&old[window.old.1..])
        + usize::from(!old[window.old.1..].is_empty() && !old.ends_with('\n'));
    let (old_end, new_end) = ops.last().map_or((before, before), |op| {
        (op.old_range().end, op.new_range().end)
    });
    push(
        &mut ops,
        DiffOp::Equal {
            old_index: old_end,
            new_index: new_end,
            len: after,
        },
    );
    ops
}

/// A unified diff range: `start,len`, or `start` alone for one line, counted from 1, as `diff -u`
/// writes it (an empty range names the line before it).
fn range(start: usize, len: usize) -> String {
    match len {
        1 => format!("{}", start + 1),
        0 => format!("{start},0"),
        _ => format!("{},{len}", start + 1),
    }
}

/// The `@@` blocks of a unified diff: one per hunk, in order, each with up to `CONTEXT`
/// unchanged lines on either side, never reaching into the next hunk's. Every line they show lies
/// in the window, whose lines `old_w` and `new_w` are.
fn render_blocks(ops: &[DiffOp], window: Window, old_w: &[&str], new_w: &[&str]) -> String {
    let before = window.lines_before;
    let runs = runs(ops);
    let mut blocks: Vec<(String, Vec<(char, &str)>)> = Vec::new();
    for (k, run) in runs.iter().enumerate() {
        let mut group: Vec<DiffOp> = Vec::new();
        // The unchanged lines before this run: the earlier run took its share first.
        if let Some(DiffOp::Equal {
            old_index,
            new_index,
            len,
        }) = run.start.checked_sub(1).map(|i| ops[i])
        {
            let taken = if k == 0 { 0 } else { trailing(len) };
            let lead = CONTEXT.min(len - taken);
            group.push(DiffOp::Equal {
                old_index: old_index + len - lead,
                new_index: new_index + len - lead,
                len: lead,
            });
        }
        group.extend_from_slice(&ops[run.clone()]);
        if let Some(DiffOp::Equal {
            old_index,
            new_index,
            len,
        }) = ops.get(run.end).copied()
        {
            let trail = if k + 1 == runs.len() {
                CONTEXT.min(len)
            } else {
                trailing(len)
            };
            group.push(DiffOp::Equal {
                old_index,
                new_index,
                len: trail,
            });
        }
        group.retain(|op| !matches!(op, DiffOp::Equal { len: 0, .. }));
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (os, ns) = (first.old_range().start, first.new_range().start);
        let header = format!(
            "@@ -{} +{} @@\n",
            range(os, last.old_range().end - os),
            range(ns, last.new_range().end - ns)
        );
        let mut shown = Vec::new();
        let old_line = |i: usize| {
            i.checked_sub(before)
                .and_then(|j| old_w.get(j))
                .copied()
                .unwrap_or_default()
        };
        let new_line = |i: usize| {
            i.checked_sub(before)
                .and_then(|j| new_w.get(j))
                .copied()
                .unwrap_or_default()
        };
        for op in &group {
            if let DiffOp::Equal { old_index, len, .. } = *op {
                shown.extend((old_index..old_index + len).map(|i| (' ', old_line(i))));
            } else {
                shown.extend(op.old_range().map(|i| ('-', old_line(i))));
                shown.extend(op.new_range().map(|i| ('+', new_line(i))));
            }
        }
        blocks.push((header, shown));
    }
    let mut text = String::new();
    for (header, shown) in blocks {
        text.push_str(&header);
        for (tag, l) in shown {
            text.push(tag);
            text.push_str(l);
            if !l.ends_with('\n') {
                text.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    text
}

/// The hunks of a diff: each maximal run of ops that change something, as a range of `ops`.
fn runs(ops: &[DiffOp]) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        if matches!(op, DiffOp::Equal { .. }) {
            continue;
        }
        match out.last_mut() {
            Some(run) if run.end == i => run.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

/// The unchanged lines after one hunk that its context shows, of `gap` lines before the next: at
/// most half of them, so the next hunk's leading context never overlaps.
fn trailing(gap: usize) -> usize {
    CONTEXT.min(gap / 2)
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

    // Verifies: WRITE-2, WRITE-11
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
    }

    // Verifies: WRITE-11
    #[test]
    fn a_change_is_its_own_hunk_unless_it_touches_the_next() {
        // Five unchanged lines apart, and one apart: a hunk each, as VS Code's diff draws them.
        let apart = Proposal::new(t(&original()), t(&changed(&[3, 9, 11])));
        assert_eq!(
            apart.hunks,
            vec![
                Hunk {
                    old_start: 3,
                    old_lines: 1,
                    new_start: 3,
                    new_lines: 1
                },
                Hunk {
                    old_start: 9,
                    old_lines: 1,
                    new_start: 9,
                    new_lines: 1
                },
                Hunk {
                    old_start: 11,
                    old_lines: 1,
                    new_start: 11,
                    new_lines: 1
                },
            ]
        );
        assert_eq!(value(&apart.with_hunks(&[1])), changed(&[9]));
        assert_eq!(value(&apart.with_hunks(&[0, 2])), changed(&[3, 11]));
        // Touching lines are one change: one hunk.
        let touching = Proposal::new(t(&original()), t(&changed(&[3, 4])));
        assert_eq!(touching.hunks.len(), 1);
        assert_eq!(touching.hunks[0].old_lines, 2);
        // A deletion next to a replacement is one hunk too.
        let joined = Proposal::new(t(&original()), t(&changed(&[5]).replace("l06\n", "")));
        assert_eq!(joined.hunks.len(), 1, "{:?}", joined.hunks);
        // The unified diff has a block per hunk, whose context never reaches the next change.
        let diff = apart.unified_diff("f.txt");
        let headers: Vec<&str> = value(&diff)
            .lines()
            .filter(|l| l.starts_with("@@ "))
            .collect();
        assert_eq!(
            headers,
            vec!["@@ -1,6 +1,6 @@", "@@ -7,4 +7,4 @@", "@@ -11,5 +11,5 @@"],
            "{}",
            value(&diff)
        );
        assert!(value(&diff).starts_with("--- a/f.txt\n+++ b/f.txt\n"));
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

    /// Applies line edits to `text` by line index, as an editor does.
    fn edited(text: &str, edits: &[LineEdit]) -> String {
        let old = lines(text);
        let mut out = String::new();
        let mut at = 0;
        for e in edits {
            out.extend(old[at..e.old.start].iter().copied());
            out.push_str(&e.new_text);
            at = e.old.end;
        }
        out.extend(old[at..].iter().copied());
        out
    }

    // Verifies: WRITE-61
    #[test]
    fn the_hunks_texts_rebuild_the_proposal_from_the_original() {
        let long = original();
        let pairs = [
            (long.clone(), changed(&[15])),
            (long.clone(), changed(&[0, 14, 29])),
            (long.clone(), long.replace("l10\n", "")),
            (long.clone(), long.replace("l10\n", "l10\nnew\nnew\n")),
            (long.clone(), format!("{long}tail")),
            (format!("{long}tail"), format!("{long}tail2")),
            (format!("{long}tail"), long.clone()),
            (String::new(), "x\ny".to_string()),
            ("x\n".to_string(), String::new()),
            ("a\r\nb\r\nc\r\n".to_string(), "a\r\nB\r\nc\r\n".to_string()),
        ];
        for (old, new) in pairs {
            let p = Proposal::new(t(&old), t(&new));
            let texts = hunk_texts(&new, &p.hunks);
            assert_eq!(texts.len(), p.hunks.len());
            // What an editor does: its lines, each hunk's old lines replaced by the hunk's text.
            let lines = lines(&old);
            let (mut rebuilt, mut at) = (String::new(), 0);
            for (h, text) in p.hunks.iter().zip(&texts) {
                rebuilt.extend(lines[at..h.old_start].iter().copied());
                rebuilt.push_str(text);
                at = h.old_start + h.old_lines;
            }
            rebuilt.extend(lines[at..].iter().copied());
            assert_eq!(rebuilt, new, "{old:?} -> {new:?}: {texts:?}");
        }
    }

    // Verifies: WRITE-12
    #[test]
    fn one_diff_gives_the_hunks_the_unified_diff_and_the_buffer_edits_a_full_diff_would() {
        let long = original();
        let pairs = [
            (long.clone(), changed(&[15])),
            (long.clone(), changed(&[0, 29])),
            (long.clone(), changed(&[1, 2, 20])),
            (long.clone(), long.replace("l10\n", "")),
            (long.clone(), long.replace("l10\n", "l10\nnew\nnew\n")),
            (long.clone(), format!("{long}tail")),
            (format!("{long}tail"), format!("{long}tail2")),
            (format!("{long}tail"), long.clone()),
            ("a\nb".to_string(), "a\nb\n".to_string()),
            (String::new(), "x\n".to_string()),
            ("x\n".to_string(), String::new()),
            ("same\n".to_string(), "same\n".to_string()),
            ("a\na\na\n".to_string(), "a\na\n".to_string()),
        ];
        for (old, new) in pairs {
            let p = Proposal::new(t(&old), t(&new));
            let full = TextDiff::from_lines(old.as_str(), new.as_str());
            let ops = full.ops();
            let expected: Vec<Hunk> = runs(ops)
                .into_iter()
                .map(|r| {
                    let (f, l) = (ops[r.start], ops[r.end - 1]);
                    Hunk {
                        old_start: f.old_range().start,
                        old_lines: l.old_range().end - f.old_range().start,
                        new_start: f.new_range().start,
                        new_lines: l.new_range().end - f.new_range().start,
                    }
                })
                .collect();
            assert_eq!(p.hunks.len(), expected.len(), "{old:?} -> {new:?}");
            let all: Vec<usize> = (0..p.hunks.len()).collect();
            assert_eq!(value(&p.with_hunks(&all)), new, "{old:?} -> {new:?}");
            assert_eq!(
                edited(&old, p.line_edits(&all).value()),
                new,
                "{old:?} -> {new:?}"
            );
            let diff = p.unified_diff("f");
            if old.ends_with('\n') && new.ends_with('\n') && old != new {
                let reference = full.unified_diff().context_radius(3).to_string();
                let ours: Vec<&str> = value(&diff).lines().skip(2).collect();
                // Hunks never share context here when a reference hunk holds one change.
                if expected.len() == 1 {
                    assert_eq!(
                        ours,
                        reference.lines().collect::<Vec<_>>(),
                        "{old:?} -> {new:?}"
                    );
                }
            }
            assert_eq!(value(&diff).is_empty(), p.hunks.is_empty());
        }
    }

    // Verifies: WRITE-12
    #[test]
    fn shared_ends_found_a_block_at_a_time_are_the_ones_a_byte_loop_finds() {
        let naive_prefix = |a: &[u8], b: &[u8]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
        let naive_suffix = |a: &[u8], b: &[u8]| {
            a.iter()
                .rev()
                .zip(b.iter().rev())
                .take_while(|(x, y)| x == y)
                .count()
        };
        let base: Vec<u8> = (0..2_000u32).map(|i| b'a' + (i * 7 % 26) as u8).collect();
        for at in [0, 1, 255, 256, 257, 511, 512, 1_000, 1_743, 1_999] {
            for cut in [0, 3, 300] {
                let mut other = base.clone();
                other[at] = b'#';
                other.truncate(other.len() - cut.min(other.len() - at - 1));
                assert_eq!(
                    shared_prefix(&base, &other),
                    naive_prefix(&base, &other),
                    "{at} {cut}"
                );
                assert_eq!(
                    shared_suffix(&base, &other),
                    naive_suffix(&base, &other),
                    "{at} {cut}"
                );
                assert_eq!(
                    shared_prefix(&other, &base),
                    naive_prefix(&other, &base),
                    "{at} {cut}"
                );
                assert_eq!(
                    shared_suffix(&other, &base),
                    naive_suffix(&other, &base),
                    "{at} {cut}"
                );
            }
        }
        assert_eq!((shared_prefix(b"", b"x"), shared_suffix(b"x", b"")), (0, 0));
        assert_eq!(shared_prefix(&base, &base), base.len());
        // A proposal over a text of many blocks still has the hunks of the whole diff.
        let long: String = (0..400).map(|i| format!("line {i}\n")).collect();
        for line in [0, 37, 200, 399] {
            let new = long.replacen(&format!("line {line}\n"), "changed\n", 1);
            let p = Proposal::new(t(&long), t(&new));
            assert_eq!(p.hunks.len(), 1, "{line}");
            assert_eq!(
                (p.hunks[0].old_start, p.hunks[0].old_lines),
                (line, 1),
                "{line}"
            );
            let all: Vec<usize> = (0..p.hunks.len()).collect();
            assert_eq!(edited(&long, p.line_edits(&all).value()), new);
        }
        let positions = LinePositions::new(&long, true);
        assert_eq!(
            (positions.position(400), positions.position(401)),
            ((400, 0), (400, 0))
        );
        let open = LinePositions::new("a\nbc", true);
        assert_eq!((open.position(1), open.position(2)), ((1, 0), (1, 2)));
    }
}
