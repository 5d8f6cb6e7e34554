//! The compiler: one command line and an [`Environment`] into a [`Plan`], or a [`Refusal`] naming
//! the span it could not say exactly.
//!
//! It is a pure function of its inputs: every fact about the machine comes through the
//! environment, and nothing is started, opened or written. A refusal is final: no part of a line
//! that failed to compile is ever offered to run.

use std::ops::Range;
use std::path::{Component, Path, PathBuf};

use super::environment::Environment;
use super::expand::{self, EXPANSION_LIMIT, GlobError, Globber, LISTING_LIMIT, TildeError};
use super::lex::{self, Char, RedirectOperator, Word};
use super::parse::{self, SimpleCommand};
use super::plan::{Assignment, Command, Pipeline, Plan, Redirect, Sequence, Step};
use super::refusal::Refusal;
use super::refusal::control_flow;

/// Compiles `line` against `env`. The grammar, and what is refused, is in the documentation of
/// the `cmdline` module (`cmdline/mod.rs`) and in `specs/run.md`.
pub fn compile(line: &str, env: &dyn Environment) -> Result<Plan, Refusal> {
    let directory = env.directory();
    if !directory.is_absolute() || directory.to_str().is_none() {
        return Err(Refusal::new(
            0..0,
            "directory",
            format!(
                "the directory `{}` is not an absolute UTF-8 path",
                directory.display()
            ),
        ));
    }
    let tokens = lex::lex(line)?;
    let sequence = parse::parse(tokens, line.len())?;
    let mut compiler = Compiler {
        env,
        directory,
        globber: Globber::new(env),
        produced: 0,
    };
    let sequence = compiler.sequence(sequence)?;
    Ok(Plan {
        directory: directory.to_path_buf(),
        sequence,
    })
}

/// Words refused in program position because they hand text to an interpreter by name.
const INTERPRETATION: &[&str] = &["eval", "source", ".", "exec", "trap"];

/// Shell builtins that change or read only the shell's own state. There is no shell, so each is
/// refused by name rather than run as whatever file happens to share the name.
const BUILTINS: &[&str] = &[
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "enable",
    "exit",
    "export",
    "fc",
    "fg",
    "getopts",
    "hash",
    "history",
    "jobs",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "pushd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "suspend",
    "times",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
];

struct Compiler<'e> {
    env: &'e dyn Environment,
    directory: &'e Path,
    globber: Globber<'e>,
    /// Words braces and globs have produced so far on this line.
    produced: usize,
}

/// The text of characters after quote removal.
fn text(chars: &[Char]) -> String {
    chars.iter().map(|c| c.ch).collect()
}

/// The name of `NAME=value`, when the word is an assignment (its `NAME=` unquoted).
fn assignment_name(word: &Word) -> Option<usize> {
    let first = word.chars.first()?;
    if first.quoted || !(first.ch == '_' || first.ch.is_ascii_alphabetic()) {
        return None;
    }
    let end = word
        .chars
        .iter()
        .position(|c| c.quoted || !(c.ch == '_' || c.ch.is_ascii_alphanumeric()))?;
    let at = word.chars[end];
    (!at.quoted && at.ch == '=').then_some(end)
}

/// Whether the word is `NAME+=…`, the shell's appending assignment.
fn is_append_assignment(word: &Word) -> bool {
    let Some(first) = word.chars.first() else {
        return false;
    };
    if first.quoted || !(first.ch == '_' || first.ch.is_ascii_alphabetic()) {
        return false;
    }
    let Some(end) = word
        .chars
        .iter()
        .position(|c| c.quoted || !(c.ch == '_' || c.ch.is_ascii_alphanumeric()))
    else {
        return false;
    };
    word.chars
        .get(end)
        .is_some_and(|c| !c.quoted && c.ch == '+')
        && word
            .chars
            .get(end + 1)
            .is_some_and(|c| !c.quoted && c.ch == '=')
}

/// `written` as an absolute path: taken from `directory` when relative, with `.` segments and
/// repeated slashes dropped. `..` is kept, so the path shown is the path the system will open
/// (dropping it by hand would be wrong where a link sits before it).
fn absolute(directory: &Path, written: &str) -> PathBuf {
    let joined = directory.join(written);
    let mut out = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

impl Compiler<'_> {
    fn sequence(&mut self, sequence: parse::Sequence) -> Result<Sequence, Refusal> {
        let first = self.step(*sequence.first)?;
        let mut rest = Vec::with_capacity(sequence.rest.len());
        for (join, step) in sequence.rest {
            rest.push((join, self.step(step)?));
        }
        Ok(Sequence {
            first: Box::new(first),
            rest,
        })
    }

    fn step(&mut self, step: parse::Step) -> Result<Step, Refusal> {
        match step {
            parse::Step::Group(sequence) => Ok(Step::Group(self.sequence(sequence)?)),
            parse::Step::Pipeline(commands) => {
                let mut out = Vec::with_capacity(commands.len());
                for command in commands {
                    out.push(self.command(command)?);
                }
                Ok(Step::Pipeline(Pipeline { commands: out }))
            }
        }
    }

    fn command(&mut self, command: SimpleCommand) -> Result<Command, Refusal> {
        let split = command
            .words
            .iter()
            .position(|word| assignment_name(word).is_none())
            .unwrap_or(command.words.len());
        let (assignments, words) = command.words.split_at(split);
        let Some(program_word) = words.first() else {
            return Err(match (assignments.first(), assignments.last()) {
                (Some(first), Some(last)) => Refusal::new(
                    first.span.start..last.span.end,
                    "assignment without a program",
                    "an assignment sets a variable only for the program after it, and nothing here outlives the line; put the program after it",
                ),
                _ => Refusal::new(
                    command.span.clone(),
                    "redirect without a program",
                    "a redirect needs a program to apply to; to create an empty file, run `touch`",
                ),
            });
        };
        let (program, argv0) = self.program(program_word)?;
        let mut argv = vec![argv0];
        for word in &words[1..] {
            argv.extend(self.argument(word)?);
        }
        let mut environment = Vec::with_capacity(assignments.len());
        for word in assignments {
            environment.push(self.assignment(word)?);
        }
        let mut redirects = Vec::with_capacity(command.redirects.len());
        for redirect in command.redirects {
            redirects.push(self.redirect(redirect)?);
        }
        Ok(Command {
            program,
            argv,
            environment,
            redirects,
        })
    }

    /// The program word: refused by name where it is not a program, never expanded by braces or
    /// globs, then resolved to an absolute path.
    fn program(&mut self, word: &Word) -> Result<(PathBuf, String), Refusal> {
        let written = word.text();
        let span = word.span.clone();
        if is_append_assignment(word) {
            return Err(Refusal::new(
                span,
                "append assignment",
                "`+=` appends to a shell variable, and there is no shell to hold one",
            ));
        }
        if let Some(refusal) = control_flow(&written, span.clone()) {
            return Err(refusal);
        }
        if INTERPRETATION.contains(&written.as_str()) {
            return Err(Refusal::new(
                span,
                "interpretation",
                format!(
                    "`{written}` hands text to an interpreter by name, so what runs would not be in the plan"
                ),
            ));
        }
        if written == "cd" || written == "pushd" || written == "popd" {
            return Err(Refusal::new(
                span,
                "shell builtin",
                format!(
                    "`{written}` changes a shell's directory and there is no shell; use the run tool's `directory` argument"
                ),
            ));
        }
        if BUILTINS.contains(&written.as_str()) {
            return Err(Refusal::new(
                span,
                "shell builtin",
                format!(
                    "`{written}` is a shell builtin that acts on the shell itself, and there is no shell here"
                ),
            ));
        }
        let mut produced = 0;
        let braced = expand::braces(&word.chars, true, &mut produced)
            .map_err(|_| self.too_many(span.clone()))?;
        if braced.len() != 1 || braced[0] != word.chars {
            return Err(Refusal::new(
                span,
                "brace in program position",
                "braces would make the program a list of words; write the program itself, or quote the braces",
            ));
        }
        if expand::is_glob(&word.chars) {
            return Err(Refusal::new(
                span,
                "glob in program position",
                "a program worked out from what is on disk changes when the tree does; write its name or path",
            ));
        }
        let chars = self.tilde(&word.chars, span.clone(), false)?;
        let name = text(&chars);
        if name.is_empty() {
            return Err(Refusal::new(
                span,
                "empty program",
                "the program name is empty",
            ));
        }
        let program = if name.contains('/') {
            let path = absolute(self.directory, &name);
            if !self.env.is_executable(&path) {
                return Err(Refusal::new(
                    span,
                    "program not found",
                    format!("there is no executable file at `{}`", path.display()),
                ));
            }
            path
        } else {
            match self.env.find_program(&name) {
                Some(path) if path.is_absolute() => path,
                _ => {
                    return Err(Refusal::new(
                        span,
                        "program not found",
                        format!("no program named `{name}` is on PATH"),
                    ));
                }
            }
        };
        Ok((program, name))
    }

    fn too_many(&self, span: Range<usize>) -> Refusal {
        Refusal::new(
            span,
            "too many words",
            format!(
                "braces and globs on this line expand to more than {EXPANSION_LIMIT} words; nobody reads a plan that long, so narrow the pattern"
            ),
        )
    }

    fn tilde(
        &self,
        chars: &[Char],
        span: Range<usize>,
        stops_at_colon: bool,
    ) -> Result<Vec<Char>, Refusal> {
        expand::tilde(chars, self.env.home(), stops_at_colon).map_err(|error| match error {
            TildeError::Other => Refusal::new(
                span,
                "tilde prefix",
                "only a `~` alone or before `/` stands for the home directory; `~name`, `~+` and `~-` are refused, so write the path",
            ),
            TildeError::NoHome => Refusal::new(
                span,
                "tilde prefix",
                "there is no home directory for `~` to stand for; write the path",
            ),
        })
    }

    /// One argument word: braces, then a leading `~`, then globs.
    fn argument(&mut self, word: &Word) -> Result<Vec<String>, Refusal> {
        let span = word.span.clone();
        let braced = expand::braces(&word.chars, word.quoted, &mut self.produced)
            .map_err(|_| self.too_many(span.clone()))?;
        let mut out = Vec::with_capacity(braced.len());
        for chars in braced {
            let chars = self.tilde(&chars, span.clone(), false)?;
            if !expand::is_glob(&chars) {
                out.push(text(&chars));
                continue;
            }
            let matches = self
                .globber
                .expand(&chars, self.directory)
                .map_err(|error| self.glob_refusal(error, span.clone(), &chars))?;
            self.produced += matches.len().saturating_sub(1);
            if self.produced > EXPANSION_LIMIT {
                return Err(self.too_many(span));
            }
            out.extend(matches);
        }
        Ok(out)
    }

    fn glob_refusal(&self, error: GlobError, span: Range<usize>, chars: &[Char]) -> Refusal {
        let pattern = text(chars);
        match error {
            GlobError::NoMatch => {
                let place = if pattern.starts_with('/') {
                    String::new()
                } else {
                    format!(" in `{}`", self.directory.display())
                };
                Refusal::new(
                    span,
                    "glob matches nothing",
                    format!(
                        "`{pattern}` matches no file{place}; a pattern is never passed on as it is, so quote it if it is meant literally"
                    ),
                )
            }
            GlobError::TooMany => Refusal::new(
                span,
                "too many words",
                format!(
                    "`{pattern}` matches more than {EXPANSION_LIMIT} paths; nobody reads a plan that long, so narrow the pattern"
                ),
            ),
            GlobError::TooWide => Refusal::new(
                span,
                "glob walks too far",
                format!(
                    "`{pattern}` reads more than {LISTING_LIMIT} directories to expand; narrow the pattern"
                ),
            ),
        }
    }

    fn assignment(&mut self, word: &Word) -> Result<Assignment, Refusal> {
        let span = word.span.clone();
        let name_end = assignment_name(word).unwrap_or(0);
        let name = text(&word.chars[..name_end]);
        let value = &word.chars[name_end + 1..];
        let mut produced = 0;
        let braced =
            expand::braces(value, true, &mut produced).map_err(|_| self.too_many(span.clone()))?;
        if braced.len() != 1 || braced[0] != value {
            return Err(Refusal::new(
                span,
                "brace in assignment",
                "braces are not expanded in an assignment; quote them",
            ));
        }
        if expand::is_glob(value) {
            return Err(Refusal::new(
                span,
                "glob in assignment",
                "globs are not expanded in an assignment; quote the pattern",
            ));
        }
        // As in the shell, a `~` after the `=` or after a `:` stands for the home directory.
        let mut expanded = Vec::with_capacity(value.len());
        for (index, part) in value.split(|c| !c.quoted && c.ch == ':').enumerate() {
            if index > 0 {
                expanded.push(Char {
                    ch: ':',
                    quoted: false,
                });
            }
            expanded.extend(self.tilde(part, span.clone(), true)?);
        }
        Ok(Assignment {
            name,
            value: text(&expanded),
        })
    }

    fn redirect(&mut self, redirect: parse::RedirectWord) -> Result<Redirect, Refusal> {
        let target = match (redirect.operator, redirect.target) {
            (RedirectOperator::ErrorToOutput, _) => return Ok(Redirect::ErrorToOutput),
            (RedirectOperator::OutputToError, _) => return Ok(Redirect::OutputToError),
            (_, None) => {
                return Err(Refusal::new(
                    redirect.span,
                    "redirect without a target",
                    "a redirect needs the file it reads or writes",
                ));
            }
            (_, Some(target)) => target,
        };
        let span = target.span.clone();
        let mut produced = 0;
        let braced = expand::braces(&target.chars, true, &mut produced)
            .map_err(|_| self.too_many(span.clone()))?;
        if braced.len() != 1 || braced[0] != target.chars {
            return Err(Refusal::new(
                span,
                "brace in redirect target",
                "a redirect names one file; write it out, or quote the braces",
            ));
        }
        if expand::is_glob(&target.chars) {
            return Err(Refusal::new(
                span,
                "glob in redirect target",
                "a redirect names one file, and a pattern could name any; write the file's name",
            ));
        }
        let chars = self.tilde(&target.chars, span.clone(), false)?;
        let written = text(&chars);
        if written.is_empty() {
            return Err(Refusal::new(
                span,
                "empty redirect target",
                "a redirect needs a file name",
            ));
        }
        if written.ends_with('/') {
            return Err(Refusal::new(
                span,
                "directory as redirect target",
                "a redirect names a file, and this names a directory",
            ));
        }
        let path = absolute(self.directory, &written);
        Ok(match redirect.operator {
            RedirectOperator::Input => Redirect::Input(path),
            RedirectOperator::Output { streams, append } => Redirect::Output {
                streams,
                path,
                append,
            },
            RedirectOperator::ErrorToOutput => Redirect::ErrorToOutput,
            RedirectOperator::OutputToError => Redirect::OutputToError,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmdline::environment::FixedEnvironment;
    use crate::cmdline::lex::MAX_LINE_BYTES;
    use crate::cmdline::plan::Streams;
    use expect_test::{Expect, expect};

    fn env() -> FixedEnvironment {
        FixedEnvironment::new("/work/proj")
            .home("/home/me")
            .programs(&[
                "cargo", "cat", "echo", "env", "find", "git", "grep", "head", "ls", "make", "rm",
                "sed", "sort", "touch", "wc", "[",
            ])
            .executable("/work/proj/scripts/build.sh")
            .executable("/home/me/bin/tool")
            .files(&[
                "README.md",
                "notes.txt",
                "a b.txt",
                ".env",
                ".git/config",
                "docs/",
                "src/main.rs",
                "src/lib.rs",
                "src/.hidden.rs",
                "src/run/mod.rs",
                "src/run/lex.rs",
                "target/debug/app",
                "vendor/inner.rs",
            ])
            .linked_dir("vendor")
    }

    /// The plan's description, or the refusal with the exact text of its span.
    fn render(line: &str, env: &FixedEnvironment) -> String {
        match compile(line, env) {
            Ok(plan) => plan.describe().join("\n"),
            Err(refusal) => format!(
                "refused: {} `{}`\n  {}",
                refusal.construct,
                refusal.excerpt(line),
                refusal.message
            ),
        }
    }

    fn check(line: &str, expect: Expect) {
        expect.assert_eq(&render(line, &env()));
    }

    /// Each line with what it compiled to: the argument vectors, or the refused construct and the
    /// exact text of its span.
    fn table(lines: &[&str]) -> String {
        let env = env();
        let mut out = String::new();
        for line in lines {
            out.push_str(&format!("`{}`\n", visible(line)));
            match compile(line, &env) {
                Ok(plan) => {
                    for command in plan.commands() {
                        let argv: Vec<String> = command.argv().iter().map(|a| shown(a)).collect();
                        out.push_str(&format!("    ok {}\n", argv.join(" ")));
                    }
                }
                Err(refusal) => out.push_str(&format!(
                    "    refused {} `{}`\n",
                    refusal.construct,
                    visible(refusal.excerpt(line))
                )),
            }
        }
        out
    }

    use crate::cmdline::plan::shown;

    /// Control characters as their pictures, so a snapshot holds no raw ones.
    fn visible(text: &str) -> String {
        text.chars()
            .map(|c| match c {
                '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32).unwrap_or('?'),
                c => c,
            })
            .collect()
    }

    // Verifies: RUN-2
    #[test]
    fn run_quoting_is_removed_and_what_it_quotes_is_literal() {
        expect![[r#"
            `echo 'single $HOME `x` \n' "double \" \\ \$ \` \n" bare\ space \'`
                ok ⟨echo⟩ ⟨single $HOME `x` \n⟩ ⟨double " \ $ ` \n⟩ ⟨bare space⟩ ⟨'⟩
            `echo a'b'"c"\d`
                ok ⟨echo⟩ ⟨abcd⟩
            `echo '' "" x''`
                ok ⟨echo⟩ ⟨⟩ ⟨⟩ ⟨x⟩
            `echo '*' "?" \[a] 'src/*.rs'`
                ok ⟨echo⟩ ⟨*⟩ ⟨?⟩ ⟨[a]⟩ ⟨src/*.rs⟩
            `echo '{a,b}' \{a,b} "~" \~/x`
                ok ⟨echo⟩ ⟨{a,b}⟩ ⟨{a,b}⟩ ⟨~⟩ ⟨~/x⟩
            `echo 'a|b' "c&&d" e\;f '#not' "(x)"`
                ok ⟨echo⟩ ⟨a|b⟩ ⟨c&&d⟩ ⟨e;f⟩ ⟨#not⟩ ⟨(x)⟩
            `echo "it's" 'say "hi"'`
                ok ⟨echo⟩ ⟨it's⟩ ⟨say "hi"⟩
            `grep -e 'a  b' notes.txt`
                ok ⟨grep⟩ ⟨-e⟩ ⟨a  b⟩ ⟨notes.txt⟩
            `echo ␉tab`
                ok ⟨echo⟩ ⟨tab⟩
        "#]]
        .assert_eq(&table(&[
            r#"echo 'single $HOME `x` \n' "double \" \\ \$ \` \n" bare\ space \'"#,
            r#"echo a'b'"c"\d"#,
            r#"echo '' "" x''"#,
            r#"echo '*' "?" \[a] 'src/*.rs'"#,
            r#"echo '{a,b}' \{a,b} "~" \~/x"#,
            r#"echo 'a|b' "c&&d" e\;f '#not' "(x)""#,
            r#"echo "it's" 'say "hi"'"#,
            r#"grep -e 'a  b' notes.txt"#,
            "echo \ttab",
        ]));
    }

    // Verifies: RUN-1, RUN-2
    #[test]
    fn run_a_separator_inside_quotes_stays_one_argument() {
        let plan = compile(r#"echo "; rm -rf /""#, &env()).unwrap();
        let commands = plan.commands();
        assert_eq!(commands.len(), 1);
        assert_eq!(commands[0].program(), Path::new("/usr/bin/echo"));
        assert_eq!(commands[0].argv(), ["echo", "; rm -rf /"]);
        let plan = compile(r"echo \; rm -rf /", &env()).unwrap();
        assert_eq!(plan.commands().len(), 1);
        assert_eq!(plan.commands()[0].argv(), ["echo", ";", "rm", "-rf", "/"]);
    }

    // Verifies: RUN-2, RUN-5
    #[test]
    fn run_a_redirect_inside_quotes_writes_nothing() {
        for line in [
            "echo '> out.txt'",
            r#"echo ">> out.txt""#,
            r"echo \> out.txt",
            "echo '2>' out.txt",
            "echo '<' notes.txt",
        ] {
            let plan = compile(line, &env()).unwrap();
            assert_eq!(plan.writes(), Vec::<&Path>::new(), "{line}");
            assert_eq!(plan.reads(), Vec::<&Path>::new(), "{line}");
            assert!(plan.commands()[0].redirects().is_empty(), "{line}");
        }
        let plan = compile("echo '> out.txt'", &env()).unwrap();
        assert_eq!(plan.commands()[0].argv(), ["echo", "> out.txt"]);
    }

    // Verifies: RUN-3, RUN-10
    #[test]
    fn run_sequences_pipelines_and_groups_keep_their_order() {
        check(
            "git log --oneline | head -5 | wc -l",
            expect![[r#"
                in ⟨/work/proj⟩
                   /usr/bin/git ⟨log⟩ ⟨--oneline⟩
                 | /usr/bin/head ⟨-5⟩
                 | /usr/bin/wc ⟨-l⟩"#]],
        );
        check(
            "make && make test || echo failed; ls",
            expect![[r#"
                in ⟨/work/proj⟩
                   /usr/bin/make
                && /usr/bin/make ⟨test⟩
                || /usr/bin/echo ⟨failed⟩
                 ; /usr/bin/ls"#]],
        );
        check(
            "make || (echo retry && make) ; { ls; cat notes.txt; } && echo done;",
            expect![[r#"
                in ⟨/work/proj⟩
                   /usr/bin/make
                || (
                      /usr/bin/echo ⟨retry⟩
                   && /usr/bin/make
                   )
                 ; (
                      /usr/bin/ls
                    ; /usr/bin/cat ⟨notes.txt⟩
                   )
                && /usr/bin/echo ⟨done⟩"#]],
        );
        check(
            "( ( ls ) )",
            expect![[r#"
                in ⟨/work/proj⟩
                   (
                      (
                         /usr/bin/ls
                      )
                   )"#]],
        );
        check(
            "find . -name x -exec rm {} \\; && echo {}",
            expect![[r#"
                in ⟨/work/proj⟩
                   /usr/bin/find ⟨.⟩ ⟨-name⟩ ⟨x⟩ ⟨-exec⟩ ⟨rm⟩ ⟨{}⟩ ⟨;⟩
                && /usr/bin/echo ⟨{}⟩"#]],
        );
    }

    // Verifies: RUN-3, RUN-9
    #[test]
    fn run_groups_are_neither_piped_nor_redirected_and_must_balance() {
        expect![[r#"
            `(ls) | wc -l`
                refused piped group `|`
            `ls | (wc -l)`
                refused piped group `| (`
            `{ ls; } > out.txt`
                refused redirect on a group `>`
            `(ls) echo`
                refused word after a group `echo`
            `(ls`
                refused unbalanced group `(`
            `ls)`
                refused unbalanced group `)`
            `{ ls }`
                refused unbalanced group `{`
            `ls; }`
                refused unbalanced group `}`
            `()`
                refused empty group `()`
            `{ }`
                refused empty group `{ }`
            `ls (x)`
                refused syntax `(`
            `ls &&`
                refused missing command `&&`
            `| ls`
                refused missing command `|`
            `ls || ; ls`
                refused missing command `;`
            `;`
                refused missing command `;`
            ``
                refused empty line ``
            `   `
                refused empty line `   `
        "#]]
        .assert_eq(&table(&[
            "(ls) | wc -l",
            "ls | (wc -l)",
            "{ ls; } > out.txt",
            "(ls) echo",
            "(ls",
            "ls)",
            "{ ls }",
            "ls; }",
            "()",
            "{ }",
            "ls (x)",
            "ls &&",
            "| ls",
            "ls || ; ls",
            ";",
            "",
            "   ",
        ]));
    }

    // Verifies: RUN-4
    #[test]
    fn run_programs_resolve_to_absolute_paths() {
        check(
            "./scripts/build.sh --release",
            expect![[r#"
                in ⟨/work/proj⟩
                   /work/proj/scripts/build.sh as ⟨./scripts/build.sh⟩ ⟨--release⟩"#]],
        );
        check(
            "scripts/../scripts/./build.sh",
            expect![[r#"
                in ⟨/work/proj⟩
                   /work/proj/scripts/../scripts/build.sh as ⟨scripts/../scripts/./build.sh⟩"#]],
        );
        check(
            "~/bin/tool x",
            expect![[r#"
                in ⟨/work/proj⟩
                   /home/me/bin/tool ⟨x⟩"#]],
        );
        check(
            "/usr/bin/git status",
            expect![[r#"
                in ⟨/work/proj⟩
                   /usr/bin/git ⟨status⟩"#]],
        );
        check(
            "'grep' x notes.txt",
            expect![[r#"
                in ⟨/work/proj⟩
                   /usr/bin/grep ⟨x⟩ ⟨notes.txt⟩"#]],
        );
        expect![[r#"
            `nosuchprogram --help`
                refused program not found `nosuchprogram`
            `./missing.sh`
                refused program not found `./missing.sh`
            `src/main.rs`
                refused program not found `src/main.rs`
            `''`
                refused empty program `''`
            `[ -f notes.txt ]`
                ok ⟨[⟩ ⟨-f⟩ ⟨notes.txt⟩ ⟨]⟩
        "#]]
        .assert_eq(&table(&[
            "nosuchprogram --help",
            "./missing.sh",
            "src/main.rs",
            "''",
            "[ -f notes.txt ]",
        ]));
        let plan = compile("git status", &env()).unwrap();
        assert_eq!(plan.commands()[0].name(), "git");
        assert_eq!(plan.commands()[0].arguments(), ["status"]);
    }

    // Verifies: RUN-5
    #[test]
    fn run_redirect_targets_are_absolute_and_listed_as_reads_and_writes() {
        check(
            "sort < notes.txt > out/sorted.txt 2> ./err.log",
            expect![[r#"
                in ⟨/work/proj⟩
                   /usr/bin/sort < ⟨/work/proj/notes.txt⟩ > ⟨/work/proj/out/sorted.txt⟩ 2> ⟨/work/proj/err.log⟩
                reads ⟨/work/proj/notes.txt⟩
                writes ⟨/work/proj/out/sorted.txt⟩ ⟨/work/proj/err.log⟩"#]],
        );
        check(
            "cargo build >> build.log 2>&1 && cargo test &> test.log; cargo doc &>> doc.log 2>> e.log",
            expect![[r#"
                in ⟨/work/proj⟩
                   /usr/bin/cargo ⟨build⟩ >> ⟨/work/proj/build.log⟩ 2>&1
                && /usr/bin/cargo ⟨test⟩ &> ⟨/work/proj/test.log⟩
                 ; /usr/bin/cargo ⟨doc⟩ &>> ⟨/work/proj/doc.log⟩ 2>> ⟨/work/proj/e.log⟩
                writes ⟨/work/proj/build.log⟩ ⟨/work/proj/test.log⟩ ⟨/work/proj/doc.log⟩ ⟨/work/proj/e.log⟩"#]],
        );
        check(
            "echo warn >&2 1>&2 2>/dev/null </dev/null",
            expect![[r#"
                in ⟨/work/proj⟩
                   /usr/bin/echo ⟨warn⟩ >&2 >&2 2> ⟨/dev/null⟩ < ⟨/dev/null⟩"#]],
        );
        check(
            "echo x > ~/out.txt > ../up.txt > /tmp//a/./b",
            expect![[r#"
                in ⟨/work/proj⟩
                   /usr/bin/echo ⟨x⟩ > ⟨/home/me/out.txt⟩ > ⟨/work/proj/../up.txt⟩ > ⟨/tmp/a/b⟩
                writes ⟨/home/me/out.txt⟩ ⟨/work/proj/../up.txt⟩ ⟨/tmp/a/b⟩"#]],
        );
        let plan = compile(
            "cat < notes.txt < notes.txt > a.txt | wc > a.txt 2> b.txt",
            &env(),
        )
        .unwrap();
        assert_eq!(plan.reads(), [Path::new("/work/proj/notes.txt")]);
        assert_eq!(
            plan.writes(),
            [Path::new("/work/proj/a.txt"), Path::new("/work/proj/b.txt")]
        );
        assert_eq!(
            plan.commands()[1].redirects()[1],
            Redirect::Output {
                streams: Streams::Error,
                path: PathBuf::from("/work/proj/b.txt"),
                append: false
            }
        );
        expect![[r#"
            `echo x > *.txt`
                refused glob in redirect target `*.txt`
            `echo x > {a,b}.txt`
                refused brace in redirect target `{a,b}.txt`
            `echo x >`
                refused redirect without a target `>`
            `echo x > ''`
                refused empty redirect target `''`
            `echo x > docs/`
                refused directory as redirect target `docs/`
            `cat < ~root/x`
                refused tilde prefix `~root/x`
            `echo x 3> f`
                refused descriptor `3>`
            `cat 2< f`
                refused descriptor `2<`
            `echo x >| f`
                refused clobbering redirect `>|`
            `echo x >&3`
                refused descriptor duplication `>&3`
            `echo x 2>&2`
                refused descriptor duplication `2>&2`
            `echo x >&file`
                refused descriptor duplication `>&file`
            `echo x <> f`
                refused read-write redirect `<>`
            `echo x <&0`
                refused descriptor duplication `<&`
            `echo x |& cat`
                refused pipe with standard error `|&`
        "#]]
        .assert_eq(&table(&[
            "echo x > *.txt",
            "echo x > {a,b}.txt",
            "echo x >",
            "echo x > ''",
            "echo x > docs/",
            "cat < ~root/x",
            "echo x 3> f",
            "cat 2< f",
            "echo x >| f",
            "echo x >&3",
            "echo x 2>&2",
            "echo x >&file",
            "echo x <> f",
            "echo x <&0",
            "echo x |& cat",
        ]));
    }

    // Verifies: RUN-6
    #[test]
    fn run_braces_expand_lists_and_sequences() {
        expect![[r#"
            `echo a{b,c}d`
                ok ⟨echo⟩ ⟨abd⟩ ⟨acd⟩
            `echo {a,b}{1,2}`
                ok ⟨echo⟩ ⟨a1⟩ ⟨a2⟩ ⟨b1⟩ ⟨b2⟩
            `echo file.{rs,toml} {}`
                ok ⟨echo⟩ ⟨file.rs⟩ ⟨file.toml⟩ ⟨{}⟩
            `echo {1..3} {c..a} {08..10} {0..9..4}`
                ok ⟨echo⟩ ⟨1⟩ ⟨2⟩ ⟨3⟩ ⟨c⟩ ⟨b⟩ ⟨a⟩ ⟨08⟩ ⟨09⟩ ⟨10⟩ ⟨0⟩ ⟨4⟩ ⟨8⟩
            `echo x{,-old}`
                ok ⟨echo⟩ ⟨x⟩ ⟨x-old⟩
            `echo {a,'b,c'} '{'a,b'}'`
                ok ⟨echo⟩ ⟨a⟩ ⟨b,c⟩ ⟨{a,b}⟩
            `echo {a} {a..} {1..b}`
                ok ⟨echo⟩ ⟨{a}⟩ ⟨{a..}⟩ ⟨{1..b}⟩
            `{ls,cat} notes.txt`
                refused brace in program position `{ls,cat}`
            `echo {1..1001}`
                refused too many words `{1..1001}`
            `echo {1..600} {1..600}`
                refused too many words `{1..600}`
        "#]]
        .assert_eq(&table(&[
            "echo a{b,c}d",
            "echo {a,b}{1,2}",
            "echo file.{rs,toml} {}",
            "echo {1..3} {c..a} {08..10} {0..9..4}",
            "echo x{,-old}",
            "echo {a,'b,c'} '{'a,b'}'",
            "echo {a} {a..} {1..b}",
            "{ls,cat} notes.txt",
            "echo {1..1001}",
            "echo {1..600} {1..600}",
        ]));
    }

    // Verifies: RUN-6
    #[test]
    fn run_a_leading_tilde_is_the_home_directory() {
        expect![[r#"
            `ls ~ ~/src '~' "~"/x a~ --dir=~/x`
                ok ⟨ls⟩ ⟨/home/me⟩ ⟨/home/me/src⟩ ⟨~⟩ ⟨~/x⟩ ⟨a~⟩ ⟨--dir=~/x⟩
            `ls ~root`
                refused tilde prefix `~root`
            `ls ~+`
                refused tilde prefix `~+`
            `ls ~'me'/x`
                ok ⟨ls⟩ ⟨~me/x⟩
        "#]]
        .assert_eq(&table(&[
            "ls ~ ~/src '~' \"~\"/x a~ --dir=~/x",
            "ls ~root",
            "ls ~+",
            "ls ~'me'/x",
        ]));
        let homeless = FixedEnvironment::new("/work/proj").programs(&["ls"]);
        expect![[r#"
            refused: tilde prefix `~/x`
              there is no home directory for `~` to stand for; write the path"#]]
        .assert_eq(&render("ls ~/x", &homeless));
    }

    // Verifies: RUN-7
    #[test]
    fn run_globs_expand_against_the_directory_sorted() {
        expect![[r#"
            `ls *.md *.txt`
                ok ⟨ls⟩ ⟨README.md⟩ ⟨a b.txt⟩ ⟨notes.txt⟩
            `ls src/*.rs`
                ok ⟨ls⟩ ⟨src/lib.rs⟩ ⟨src/main.rs⟩
            `ls src/.*.rs .e*`
                ok ⟨ls⟩ ⟨src/.hidden.rs⟩ ⟨.env⟩
            `ls */*.rs`
                ok ⟨ls⟩ ⟨src/lib.rs⟩ ⟨src/main.rs⟩ ⟨vendor/inner.rs⟩
            `ls **/*.rs`
                ok ⟨ls⟩ ⟨src/lib.rs⟩ ⟨src/main.rs⟩ ⟨src/run/lex.rs⟩ ⟨src/run/mod.rs⟩
            `ls src/**`
                ok ⟨ls⟩ ⟨src/lib.rs⟩ ⟨src/main.rs⟩ ⟨src/run⟩ ⟨src/run/lex.rs⟩ ⟨src/run/mod.rs⟩
            `ls src/run/[a-l]*.rs src/?ain.rs`
                ok ⟨ls⟩ ⟨src/run/lex.rs⟩ ⟨src/main.rs⟩
            `ls */`
                ok ⟨ls⟩ ⟨docs/⟩ ⟨scripts/⟩ ⟨src/⟩ ⟨target/⟩ ⟨vendor/⟩
            `ls ./src/../src/m*`
                ok ⟨ls⟩ ⟨./src/../src/main.rs⟩
            `ls /work/proj/src/l*`
                ok ⟨ls⟩ ⟨/work/proj/src/lib.rs⟩
            `ls *' '*`
                ok ⟨ls⟩ ⟨a b.txt⟩
            `grep -n x '*.md' "src/*.rs"`
                ok ⟨grep⟩ ⟨-n⟩ ⟨x⟩ ⟨*.md⟩ ⟨src/*.rs⟩
        "#]]
        .assert_eq(&table(&[
            "ls *.md *.txt",
            "ls src/*.rs",
            "ls src/.*.rs .e*",
            "ls */*.rs",
            "ls **/*.rs",
            "ls src/**",
            "ls src/run/[a-l]*.rs src/?ain.rs",
            "ls */",
            "ls ./src/../src/m*",
            "ls /work/proj/src/l*",
            "ls *' '*",
            "grep -n x '*.md' \"src/*.rs\"",
        ]));
    }

    // Verifies: RUN-7
    #[test]
    fn run_a_glob_matching_nothing_is_refused_and_expansion_is_bounded() {
        expect![[r#"
            `ls *.nothing`
                refused glob matches nothing `*.nothing`
            `ls src/*/missing.rs`
                refused glob matches nothing `src/*/missing.rs`
            `curl https://example.com/?q=1`
                refused program not found `curl`
            `ls *.md *.nothing`
                refused glob matches nothing `*.nothing`
        "#]]
        .assert_eq(&table(&[
            "ls *.nothing",
            "ls src/*/missing.rs",
            "curl https://example.com/?q=1",
            "ls *.md *.nothing",
        ]));
        let names: Vec<String> = (0..=EXPANSION_LIMIT)
            .map(|n| format!("f{n:04}.txt"))
            .collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let crowded = FixedEnvironment::new("/work/proj")
            .programs(&["ls"])
            .files(&names);
        expect![[r#"
            refused: too many words `f*`
              `f*` matches more than 1000 paths; nobody reads a plan that long, so narrow the pattern"#]]
        .assert_eq(&render("ls f*", &crowded));
        assert_eq!(
            compile("ls f0*", &crowded).unwrap().commands()[0]
                .arguments()
                .len(),
            1000
        );
    }

    // Verifies: RUN-8
    #[test]
    fn run_assignments_before_the_program_are_its_environment() {
        check(
            "RUST_LOG=debug CARGO_TARGET_DIR='target dir' cargo test",
            expect![[r#"
                in ⟨/work/proj⟩
                   RUST_LOG=⟨debug⟩ CARGO_TARGET_DIR=⟨target dir⟩ /usr/bin/cargo ⟨test⟩"#]],
        );
        check(
            "A= B=~/x:~/y C=a=b env X=1",
            expect![[r#"
                in ⟨/work/proj⟩
                   A=⟨⟩ B=⟨/home/me/x:/home/me/y⟩ C=⟨a=b⟩ /usr/bin/env ⟨X=1⟩"#]],
        );
        let plan = compile("A=1 > out.txt B=2 env", &env()).unwrap();
        let names: Vec<&str> = plan.commands()[0]
            .environment()
            .iter()
            .map(|a| a.name.as_str())
            .collect();
        assert_eq!(names, ["A", "B"]);
        expect![[r#"
            `A=1`
                refused assignment without a program `A=1`
            `A=1 B=2 > out.txt`
                refused assignment without a program `A=1 B=2`
            `A=* ls`
                refused glob in assignment `A=*`
            `A={x,y} ls`
                refused brace in assignment `A={x,y}`
            `A+=1 ls`
                refused append assignment `A+=1`
            `'A=1' ls`
                refused program not found `'A=1'`
            `A=~root ls`
                refused tilde prefix `A=~root`
        "#]]
        .assert_eq(&table(&[
            "A=1",
            "A=1 B=2 > out.txt",
            "A=* ls",
            "A={x,y} ls",
            "A+=1 ls",
            "'A=1' ls",
            "A=~root ls",
        ]));
    }

    // Verifies: RUN-9
    #[test]
    fn run_constructs_with_a_meaning_outside_the_line_are_refused_with_their_span() {
        expect![[r#"
            `echo $(rm -rf /) after`
                refused command substitution `$(rm -rf /)`
            `echo "a $(id) b"`
                refused command substitution `$(id)`
            `echo `id` after`
                refused command substitution ``id``
            `echo $HOME/x`
                refused variable `$HOME`
            `echo "$HOME"`
                refused variable `$HOME`
            `echo ${HOME:-/} x`
                refused parameter expansion `${HOME:-/}`
            `echo $((1 + (2 * 3))) x`
                refused arithmetic expansion `$((1 + (2 * 3)))`
            `echo $1 $?`
                refused variable `$1`
            `echo $'a\n'`
                refused ansi-c quoting `$'a\n'`
            `echo $"x"`
                refused locale quoting `$"x"`
            `echo cost: $`
                refused dollar sign `$`
            `diff <(ls a) b`
                refused process substitution `<(ls a)`
            `tee >(wc -l) < notes.txt`
                refused process substitution `>(wc -l)`
            `make &`
                refused background `&`
            `make & ls`
                refused background `&`
            `cat <<EOF`
                refused here-document `<<`
            `cat <<< 'text'`
                refused here-string `<<<`
            `echo a␊rm -rf /`
                refused newline `␊`
            `echo 'a␊b'`
                refused newline `␊`
            `echo a␍b`
                refused newline `␍`
            `ls # a comment`
                refused comment `# a comment`
            `ls;#x`
                refused comment `#x`
            `echo a#b '#c'`
                ok ⟨echo⟩ ⟨a#b⟩ ⟨#c⟩
            `echo 'unclosed`
                refused unbalanced quote `'unclosed`
            `echo "unclosed`
                refused unbalanced quote `"unclosed`
            `echo trailing\`
                refused trailing backslash `\`
            `case x in a) ;; esac`
                refused case terminator `;;`
            `echo {fd}>x`
                refused named descriptor `{fd}>`
            `echo {}>x`
                ok ⟨echo⟩ ⟨{}⟩
            `echo a\␊b`
                refused newline `␊`
            `echo a␀b`
                refused nul character `␀`
        "#]]
        .assert_eq(&table(&[
            "echo $(rm -rf /) after",
            "echo \"a $(id) b\"",
            "echo `id` after",
            "echo $HOME/x",
            "echo \"$HOME\"",
            "echo ${HOME:-/} x",
            "echo $((1 + (2 * 3))) x",
            "echo $1 $?",
            "echo $'a\\n'",
            "echo $\"x\"",
            "echo cost: $",
            "diff <(ls a) b",
            "tee >(wc -l) < notes.txt",
            "make &",
            "make & ls",
            "cat <<EOF",
            "cat <<< 'text'",
            "echo a\nrm -rf /",
            "echo 'a\nb'",
            "echo a\rb",
            "ls # a comment",
            "ls;#x",
            "echo a#b '#c'",
            "echo 'unclosed",
            "echo \"unclosed",
            "echo trailing\\",
            "case x in a) ;; esac",
            "echo {fd}>x",
            "echo {}>x",
            "echo a\\\nb",
            "echo a\0b",
        ]));
    }

    // Verifies: RUN-9
    #[test]
    fn run_a_long_line_is_refused_and_a_hostile_one_is_cheap() {
        let long = format!("echo {}", "x".repeat(MAX_LINE_BYTES));
        let refusal = compile(&long, &env()).unwrap_err();
        assert_eq!(refusal.construct, "line too long");
        assert_eq!(refusal.span, MAX_LINE_BYTES..long.len());
        // Lines just inside the bound that would cost quadratic time to a naive expander.
        let started = std::time::Instant::now();
        for filler in ["{", "{a}", "{a,", "[", "[!", "[[:a:]", "*a", "a{b,c}"] {
            let mut line = String::from("echo ");
            while line.len() + filler.len() < MAX_LINE_BYTES {
                line.push_str(filler);
            }
            let _ = compile(&line, &env());
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "compiling hostile lines took {:?}",
            started.elapsed()
        );
    }

    // Verifies: RUN-9
    #[test]
    fn run_groups_nested_past_the_bound_are_refused_rather_than_overflowing() {
        use crate::cmdline::parse::MAX_GROUP_DEPTH;
        let nested = |n: usize| format!("{}ls{}", "(".repeat(n), ")".repeat(n));
        // On a thread with a runtime worker's 2 MiB stack: the parser descends once a group, and
        // 8,000 of them (a line within its 16 KiB) overflowed it.
        let refusals = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                [
                    nested(8_000),
                    nested(MAX_GROUP_DEPTH + 1),
                    nested(MAX_GROUP_DEPTH),
                ]
                .map(|line| compile(&line, &env()).err().map(|r| (r.construct, r.span)))
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(
            refusals,
            [
                Some((
                    "groups nested too deeply",
                    MAX_GROUP_DEPTH..MAX_GROUP_DEPTH + 1
                )),
                Some((
                    "groups nested too deeply",
                    MAX_GROUP_DEPTH..MAX_GROUP_DEPTH + 1
                )),
                None
            ]
        );
    }

    // Verifies: RUN-6
    #[test]
    fn run_thousands_of_braces_in_one_word_expand_in_a_loop_within_the_budget() {
        // 2,700 braces of one word each: expanded by recursion, one frame and one copy of the
        // word a brace, they overflowed a small stack and took a gigabyte; each now counts
        // against the line's budget of expansions and the expansion is a loop.
        let outcome = std::thread::Builder::new()
            .stack_size(128 * 1024)
            .spawn(|| {
                let many = format!("echo {}", "{1..1}".repeat(2_700));
                let few = format!("echo a{}", "{1..1}".repeat(900));
                [many, few].map(|line| compile(&line, &env()).err().map(|r| r.construct))
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(outcome, [Some("too many words"), None]);
    }

    // Verifies: RUN-4, RUN-9
    #[test]
    fn run_words_that_are_not_programs_are_refused_in_program_position() {
        expect![[r#"
            `eval ls`
                refused interpretation `eval`
            `source env.sh`
                refused interpretation `source`
            `. env.sh`
                refused interpretation `.`
            `exec ls`
                refused interpretation `exec`
            `A=1 exec ls`
                refused interpretation `exec`
            `trap 'x' EXIT`
                refused interpretation `trap`
            `if true; then ls; fi`
                refused control flow `if`
            `while true; do ls; done`
                refused control flow `while`
            `for f in a b; do echo x; done`
                refused control flow `for`
            `! ls`
                refused control flow `!`
            `time ls`
                refused control flow `time`
            `[[ -f x ]]`
                refused control flow `[[`
            `function f { ls; }`
                refused control flow `function`
            `select x in a; do ls; done`
                refused control flow `select`
            `coproc ls`
                refused coprocess `coproc`
            `cd src && ls`
                refused shell builtin `cd`
            `export A=1`
                refused shell builtin `export`
            `set -e; ls`
                refused shell builtin `set`
            `ls && echo then`
                ok ⟨ls⟩
                ok ⟨echo⟩ ⟨then⟩
            `*.sh`
                refused glob in program position `*.sh`
            `src/ma?n.rs`
                refused glob in program position `src/ma?n.rs`
        "#]]
        .assert_eq(&table(&[
            "eval ls",
            "source env.sh",
            ". env.sh",
            "exec ls",
            "A=1 exec ls",
            "trap 'x' EXIT",
            "if true; then ls; fi",
            "while true; do ls; done",
            "for f in a b; do echo x; done",
            "! ls",
            "time ls",
            "[[ -f x ]]",
            "function f { ls; }",
            "select x in a; do ls; done",
            "coproc ls",
            "cd src && ls",
            "export A=1",
            "set -e; ls",
            "ls && echo then",
            "*.sh",
            "src/ma?n.rs",
        ]));
    }

    // Verifies: RUN-1
    #[test]
    fn run_a_line_that_half_compiles_yields_no_plan() {
        for line in [
            "ls && echo $(id)",
            "echo ok; if true",
            "ls | nosuchprogram",
            "cat notes.txt > out.txt && ls *.nothing",
            "echo fine; echo 'unclosed",
            "ls; rm -rf / &",
        ] {
            let refusal = compile(line, &env()).expect_err(line);
            assert!(refusal.span.start > 0, "{line}: {refusal:?}");
            assert!(!refusal.excerpt(line).is_empty(), "{line}");
        }
    }

    // Verifies: RUN-10
    #[test]
    fn run_describe_shows_binaries_arguments_redirects_and_directory() {
        check(
            "LANG=C ./scripts/build.sh 'two words' '' 'bell\u{7}' 'x⟩ ⟨y' 2>&1",
            expect![[r#"
                in ⟨/work/proj⟩
                   LANG=⟨C⟩ /work/proj/scripts/build.sh as ⟨./scripts/build.sh⟩ ⟨two words⟩ ⟨⟩ ⟨bell␇⟩ ⟨x\u{27e9} \u{27e8}y⟩ 2>&1"#]],
        );
        check(
            "grep -rn 'a\tb' src | head -3 > 'out file.txt' && cat < notes.txt",
            expect![[r#"
                in ⟨/work/proj⟩
                   /usr/bin/grep ⟨-rn⟩ ⟨a␉b⟩ ⟨src⟩
                 | /usr/bin/head ⟨-3⟩ > ⟨/work/proj/out file.txt⟩
                && /usr/bin/cat < ⟨/work/proj/notes.txt⟩
                reads ⟨/work/proj/notes.txt⟩
                writes ⟨/work/proj/out file.txt⟩"#]],
        );
    }

    // Verifies: RUN-11
    #[test]
    fn run_two_spellings_of_one_plan_share_an_identity() {
        let env = env();
        let identity = |line: &str| compile(line, &env).unwrap().identity();
        for (a, b) in [
            ("grep 'a b' notes.txt", "grep \"a b\" notes.txt"),
            ("ls  -l", "ls -l"),
            ("ls -l", "\tls   -l  "),
            ("echo a b", "echo {a,b}"),
            ("ls src/lib.rs src/main.rs", "ls src/*.rs"),
            ("ls /home/me/x", "ls ~/x"),
            ("cat < notes.txt", "cat <notes.txt"),
            ("ls > out.txt", "ls > ./out.txt"),
            ("ls && ls", "ls&&ls"),
            ("ls; ls", "ls ; ls ;"),
            ("/usr/bin/ls", "'/usr/bin/ls'"),
            ("(ls; ls)", "{ ls; ls; }"),
        ] {
            assert_eq!(identity(a), identity(b), "{a} / {b}");
        }
        expect!["plan/1 dir=10:/work/proj [pipe(cmd(prog=13:/usr/bin/grep argv=4,4:grep,2:-n,3:a b,9:notes.txt env=1,1:A=1:1 redirects=1,err-to-out) | cmd(prog=11:/usr/bin/wc argv=2,2:wc,2:-l env=0 redirects=1,out-replace=18:/work/proj/out.txt)) && group[pipe(cmd(prog=11:/usr/bin/ls argv=1,2:ls env=0 redirects=0))]]"]
        .assert_eq(&identity("A=1 grep -n 'a b' notes.txt 2>&1 | wc -l > out.txt && (ls)"));
    }

    // Verifies: RUN-11
    #[test]
    fn run_different_plans_never_share_an_identity() {
        let env = env();
        let lines = [
            "ls a b",
            "ls 'a b'",
            "ls ab",
            "ls a; ls b",
            "ls a && ls b",
            "ls a || ls b",
            "ls a | ls b",
            "(ls a; ls b)",
            "ls a > b",
            "ls a >> b",
            "ls a 2> b",
            "ls a &> b",
            "ls a < b",
            "ls a > b 2>&1",
            "ls a 2>&1 > b",
            "A=b ls a",
            "A=b ls",
            "ls A=b",
            // The same binary, but argv[0] is what the line wrote.
            "/usr/bin/ls a b",
            // Arguments that spell the identity's own notation cannot forge another plan's.
            "ls '1:a,1:b'",
            "ls 'a,1:b'",
            "ls 'a b) | cmd(prog=13:/usr/bin/ls'",
        ];
        let mut seen = std::collections::BTreeMap::new();
        for line in lines {
            let identity = compile(line, &env).unwrap().identity();
            if let Some(other) = seen.insert(identity, line) {
                panic!("`{line}` and `{other}` share an identity");
            }
        }
        let elsewhere = FixedEnvironment::new("/work/other").programs(&["ls"]);
        assert_ne!(
            compile("ls", &env).unwrap().identity(),
            compile("ls", &elsewhere).unwrap().identity()
        );
    }

    // Verifies: RUN-12
    #[test]
    fn run_the_compiler_knows_the_machine_only_through_its_environment() {
        // Neither this directory nor these programs exist on the machine running the test.
        let invented = FixedEnvironment::new("/nonexistent/workspace")
            .home("/nonexistent/home")
            .program("frobnicate", "/nonexistent/bin/frobnicate")
            .files(&["x/one.txt", "x/two.txt"]);
        check_with(
            &invented,
            "frobnicate x/*.txt ~/y > out",
            expect![[r#"
                in ⟨/nonexistent/workspace⟩
                   /nonexistent/bin/frobnicate ⟨x/one.txt⟩ ⟨x/two.txt⟩ ⟨/nonexistent/home/y⟩ > ⟨/nonexistent/workspace/out⟩
                writes ⟨/nonexistent/workspace/out⟩"#]],
        );
        let relative = FixedEnvironment::new("relative/dir").programs(&["ls"]);
        assert_eq!(compile("ls", &relative).unwrap_err().construct, "directory");
    }

    fn check_with(env: &FixedEnvironment, line: &str, expect: Expect) {
        expect.assert_eq(&render(line, env));
    }
}
