//! The compiled plan: what a command line means, as data a person can read and an executor can
//! follow without interpreting anything.
//!
//! A plan is only ever made by `compile` (in `compile.rs`): its fields are private, so a
//! value of this type is a line that compiled. The tree is a [`Sequence`] of [`Step`]s joined by
//! `&&`, `||` and `;`, evaluated left to right with the shell's rule (`&&` runs the next step when
//! the last status was success, `||` when it was failure, `;` always); a step is a pipeline of
//! [`Command`]s or a group holding a sequence of its own.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub use super::lex::Streams;

/// The file a redirect may name without being a read or a write of anything: bytes sent there are
/// discarded and reading it yields nothing, so it is left out of [`Plan::reads`] and
/// [`Plan::writes`] (it is still shown by [`Plan::describe`]).
pub const DISCARD: &str = "/dev/null";

/// A compiled command line.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Plan {
    pub(crate) directory: PathBuf,
    pub(crate) sequence: Sequence,
}

/// Steps run one after another, each after the join that precedes it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Sequence {
    pub(crate) first: Box<Step>,
    pub(crate) rest: Vec<(Join, Step)>,
}

/// How a step is joined to the one before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Join {
    /// `&&`: runs when the last status was success.
    And,
    /// `||`: runs when the last status was failure.
    Or,
    /// `;`: runs whatever the last status was.
    Then,
}

/// One step of a sequence.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// Commands joined by `|`, each one's standard output feeding the next one's standard input;
    /// the status is the last command's. One command alone is a pipeline of one.
    Pipeline(Pipeline),
    /// `( … )` or `{ …; }`: a sequence run as one step, for ordering only (no subshell, nothing
    /// to keep apart).
    Group(Sequence),
}

/// One or more commands joined by `|`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pipeline {
    pub(crate) commands: Vec<Command>,
}

/// One program to start: what runs, with which arguments, environment and streams.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Command {
    pub(crate) program: PathBuf,
    pub(crate) argv: Vec<String>,
    pub(crate) environment: Vec<Assignment>,
    pub(crate) redirects: Vec<Redirect>,
}

/// `NAME=value` written before a program: set in that program's environment only.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Assignment {
    pub name: String,
    pub value: String,
}

/// A redirect, with its file resolved to an absolute path. Redirects apply in the order written,
/// so `> f 2>&1` sends both streams to `f` and `2>&1 > f` sends only standard output there.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Redirect {
    /// `< file`: standard input is read from the file.
    Input(PathBuf),
    /// `>`, `>>`, `2>`, `2>>`, `&>`, `&>>`: the file is created or replaced (or appended to).
    Output {
        streams: Streams,
        path: PathBuf,
        append: bool,
    },
    /// `2>&1`: standard error goes wherever standard output goes at that point.
    ErrorToOutput,
    /// `>&2` (also `1>&2`): standard output goes wherever standard error goes at that point.
    OutputToError,
}

impl Plan {
    /// The directory every step runs in, absolute.
    pub fn directory(&self) -> &Path {
        &self.directory
    }

    /// The tree of steps.
    pub fn sequence(&self) -> &Sequence {
        &self.sequence
    }

    /// Every command of the plan in the order written, whatever branch it sits on: each one could
    /// run, so each one is endorsed.
    pub fn commands(&self) -> Vec<&Command> {
        let mut out = Vec::new();
        self.sequence.collect_commands(&mut out);
        out
    }

    /// Every file read through `<`, in the order written, each once; [`DISCARD`] is left out.
    pub fn reads(&self) -> Vec<&Path> {
        self.files(|redirect| match redirect {
            Redirect::Input(path) => Some(path),
            _ => None,
        })
    }

    /// Every file created, replaced or appended to by a redirect, in the order written, each once;
    /// [`DISCARD`] is left out. These are write destinations and take the write gates.
    pub fn writes(&self) -> Vec<&Path> {
        self.files(|redirect| match redirect {
            Redirect::Output { path, .. } => Some(path),
            _ => None,
        })
    }

    fn files<'a>(&'a self, pick: impl Fn(&'a Redirect) -> Option<&'a PathBuf>) -> Vec<&'a Path> {
        let mut out: Vec<&Path> = Vec::new();
        for command in self.commands() {
            for path in command.redirects.iter().filter_map(&pick) {
                if path.as_path() != Path::new(DISCARD) && !out.contains(&path.as_path()) {
                    out.push(path);
                }
            }
        }
        out
    }

    /// The plan as lines for a person: the directory, each command with its binary, its
    /// environment, its arguments one by one between `⟨` and `⟩` and its redirects, the joins
    /// between steps at the start of each line, and the files it reads and writes.
    ///
    /// Inside `⟨ ⟩` control characters are shown as their pictures (U+2400 onwards) and characters
    /// that hide or disguise text (`⟨`, `⟩`, the pictures themselves, invisible and direction
    /// controlling characters, spaces other than U+0020) as `\u{…}`, so no argument can look like
    /// two and no two different arguments look alike.
    pub fn describe(&self) -> Vec<String> {
        let mut lines = vec![format!("in {}", shown(&self.directory.to_string_lossy()))];
        describe_sequence(&self.sequence, 0, &mut lines);
        let reads = self.reads();
        if !reads.is_empty() {
            lines.push(format!("reads {}", shown_paths(&reads)));
        }
        let writes = self.writes();
        if !writes.is_empty() {
            lines.push(format!("writes {}", shown_paths(&writes)));
        }
        lines
    }

    /// A canonical text for the plan: two lines that compile to the same plan have the same
    /// identity, and two different plans never do. The line's spelling is not part of it, so an
    /// answer binds to what would run. Strings are written with their length in bytes first, so
    /// no argument can forge the structure around it.
    pub fn identity(&self) -> String {
        let mut out = String::from("plan/1 dir=");
        canonical_string(&self.directory.to_string_lossy(), &mut out);
        out.push(' ');
        canonical_sequence(&self.sequence, &mut out);
        out
    }
}

impl Sequence {
    /// The first step.
    pub fn first(&self) -> &Step {
        &self.first
    }

    /// Each later step with the join before it.
    pub fn rest(&self) -> &[(Join, Step)] {
        &self.rest
    }

    fn collect_commands<'a>(&'a self, out: &mut Vec<&'a Command>) {
        for step in std::iter::once(self.first.as_ref()).chain(self.rest.iter().map(|(_, s)| s)) {
            match step {
                Step::Pipeline(pipeline) => out.extend(pipeline.commands.iter()),
                Step::Group(sequence) => sequence.collect_commands(out),
            }
        }
    }
}

impl Pipeline {
    /// The commands, first to last; never empty.
    pub fn commands(&self) -> &[Command] {
        &self.commands
    }
}

impl Command {
    /// The absolute path of the binary that runs.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// The program's file name (`grep` for `/usr/bin/grep`), for tables keyed by program.
    pub fn name(&self) -> &str {
        self.program
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or_default()
    }

    /// The argument vector: `argv[0]` is the program as the line wrote it, the rest are literal.
    pub fn argv(&self) -> &[String] {
        &self.argv
    }

    /// The arguments after `argv[0]`.
    pub fn arguments(&self) -> &[String] {
        self.argv.get(1..).unwrap_or_default()
    }

    /// The `NAME=value` assignments written before the program, in order.
    pub fn environment(&self) -> &[Assignment] {
        &self.environment
    }

    /// The redirects, in the order they apply.
    pub fn redirects(&self) -> &[Redirect] {
        &self.redirects
    }

    fn describe(&self) -> String {
        let mut line = String::new();
        for assignment in &self.environment {
            let _ = write!(line, "{}={} ", assignment.name, shown(&assignment.value));
        }
        line.push_str(&self.program.to_string_lossy());
        // `argv[0]` is shown only where it says something the path does not.
        let argv0 = self.argv.first().map_or("", String::as_str);
        if argv0 != self.name() && Path::new(argv0) != self.program {
            let _ = write!(line, " as {}", shown(argv0));
        }
        for argument in self.arguments() {
            line.push(' ');
            line.push_str(&shown(argument));
        }
        for redirect in &self.redirects {
            line.push(' ');
            match redirect {
                Redirect::Input(path) => {
                    let _ = write!(line, "< {}", shown(&path.to_string_lossy()));
                }
                Redirect::Output {
                    streams,
                    path,
                    append,
                } => {
                    let stream = match streams {
                        Streams::Output => "",
                        Streams::Error => "2",
                        Streams::Both => "&",
                    };
                    let arrow = if *append { ">>" } else { ">" };
                    let _ = write!(line, "{stream}{arrow} {}", shown(&path.to_string_lossy()));
                }
                Redirect::ErrorToOutput => line.push_str("2>&1"),
                Redirect::OutputToError => line.push_str(">&2"),
            }
        }
        line
    }
}

fn describe_sequence(sequence: &Sequence, depth: usize, lines: &mut Vec<String>) {
    let indent = "   ".repeat(depth);
    describe_step(&sequence.first, &indent, "   ", depth, lines);
    for (join, step) in &sequence.rest {
        let mark = match join {
            Join::And => "&& ",
            Join::Or => "|| ",
            Join::Then => " ; ",
        };
        describe_step(step, &indent, mark, depth, lines);
    }
}

fn describe_step(step: &Step, indent: &str, mark: &str, depth: usize, lines: &mut Vec<String>) {
    match step {
        Step::Pipeline(pipeline) => {
            for (index, command) in pipeline.commands.iter().enumerate() {
                let mark = if index == 0 { mark } else { " | " };
                lines.push(format!("{indent}{mark}{}", command.describe()));
            }
        }
        Step::Group(sequence) => {
            lines.push(format!("{indent}{mark}("));
            describe_sequence(sequence, depth + 1, lines);
            lines.push(format!("{indent}   )"));
        }
    }
}

fn shown_paths(paths: &[&Path]) -> String {
    paths
        .iter()
        .map(|path| shown(&path.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One string between `⟨` and `⟩`, with nothing in it able to pass for a boundary or hide.
pub fn shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 6);
    out.push('⟨');
    out.push_str(&masked(text));
    out.push('⟩');
    out
}

/// The one mask for a command a person reads, wherever they read it (a plan's lines, a run
/// question's title and command, a tool call's title, status, the audit trail): control
/// characters drawn as their pictures, and every character that could disguise text (the
/// direction overrides and isolates, zero-width and other invisible format characters, spaces
/// that are not U+0020, the control pictures themselves, `⟨` and `⟩`) written as a `\u{…}`
/// escape, a backslash that would read as the start of one escaped too. What is left is the line
/// as its bytes say, with nothing able to reorder or hide part of it.
pub fn masked(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    for (index, &c) in chars.iter().enumerate() {
        match c {
            '\u{0}'..='\u{1f}' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
            '\u{7f}' => out.push('\u{2421}'),
            // A backslash that would read as the start of an escape is escaped itself.
            '\\' if chars.get(index + 1..index + 3) == Some(&['u', '{']) => {
                out.push_str("\\u{5c}");
            }
            c if is_disguising(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Characters that could make an argument look like something it is not: the boundary marks,
/// the control pictures (which would pass for control characters), C1 controls, spaces that are
/// not U+0020, and the invisible and direction-changing format characters.
fn is_disguising(c: char) -> bool {
    matches!(c,
        '⟨' | '⟩'
        | '\u{80}'..='\u{9f}'
        | '\u{a0}' | '\u{ad}' | '\u{34f}' | '\u{61c}' | '\u{115f}' | '\u{1160}' | '\u{1680}'
        | '\u{17b4}' | '\u{17b5}' | '\u{180e}'
        | '\u{2000}'..='\u{200f}'
        | '\u{2028}'..='\u{202f}'
        | '\u{205f}'..='\u{206f}'
        | '\u{2400}'..='\u{2426}'
        | '\u{3000}' | '\u{3164}' | '\u{feff}' | '\u{ffa0}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{e0000}'..='\u{e007f}'
    )
}

fn canonical_string(text: &str, out: &mut String) {
    let _ = write!(out, "{}:{text}", text.len());
}

fn canonical_sequence(sequence: &Sequence, out: &mut String) {
    out.push('[');
    canonical_step(&sequence.first, out);
    for (join, step) in &sequence.rest {
        out.push_str(match join {
            Join::And => " && ",
            Join::Or => " || ",
            Join::Then => " ; ",
        });
        canonical_step(step, out);
    }
    out.push(']');
}

fn canonical_step(step: &Step, out: &mut String) {
    match step {
        Step::Pipeline(pipeline) => {
            out.push_str("pipe(");
            for (index, command) in pipeline.commands.iter().enumerate() {
                if index > 0 {
                    out.push_str(" | ");
                }
                canonical_command(command, out);
            }
            out.push(')');
        }
        Step::Group(sequence) => {
            out.push_str("group");
            canonical_sequence(sequence, out);
        }
    }
}

fn canonical_command(command: &Command, out: &mut String) {
    out.push_str("cmd(prog=");
    canonical_string(&command.program.to_string_lossy(), out);
    let _ = write!(out, " argv={}", command.argv.len());
    for argument in &command.argv {
        out.push(',');
        canonical_string(argument, out);
    }
    let _ = write!(out, " env={}", command.environment.len());
    for assignment in &command.environment {
        out.push(',');
        canonical_string(&assignment.name, out);
        out.push('=');
        canonical_string(&assignment.value, out);
    }
    let _ = write!(out, " redirects={}", command.redirects.len());
    for redirect in &command.redirects {
        out.push(',');
        match redirect {
            Redirect::Input(path) => {
                out.push_str("in=");
                canonical_string(&path.to_string_lossy(), out);
            }
            Redirect::Output {
                streams,
                path,
                append,
            } => {
                let stream = match streams {
                    Streams::Output => "out",
                    Streams::Error => "err",
                    Streams::Both => "both",
                };
                let mode = if *append { "append" } else { "replace" };
                let _ = write!(out, "{stream}-{mode}=");
                canonical_string(&path.to_string_lossy(), out);
            }
            Redirect::ErrorToOutput => out.push_str("err-to-out"),
            Redirect::OutputToError => out.push_str("out-to-err"),
        }
    }
    out.push(')');
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    // Verifies: RUN-10
    #[test]
    fn run_plan_shows_each_argument_between_marks_and_unmasks_hidden_characters() {
        let shown_all: Vec<String> = [
            "a b",
            "",
            "tab\there",
            "bell\u{7}",
            "x⟩ ⟨y",
            "\u{202e}txt.exe",
            "zero\u{200b}width",
            "picture\u{2409}",
            r"C:\users",
            r"\u{41}",
            "nb\u{a0}sp",
        ]
        .iter()
        .map(|text| shown(text))
        .collect();
        expect![[r#"
            ⟨a b⟩
            ⟨⟩
            ⟨tab␉here⟩
            ⟨bell␇⟩
            ⟨x\u{27e9} \u{27e8}y⟩
            ⟨\u{202e}txt.exe⟩
            ⟨zero\u{200b}width⟩
            ⟨picture\u{2409}⟩
            ⟨C:\users⟩
            ⟨\u{5c}u{41}⟩
            ⟨nb\u{a0}sp⟩"#]]
        .assert_eq(&shown_all.join("\n"));
    }
}
