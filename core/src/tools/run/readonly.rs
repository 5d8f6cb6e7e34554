//! The read-only table: the programs a line may run unasked, each with the options known to do
//! nothing but change how it reads the files it is given and what it prints, and the parser that
//! decides whether one command is such a program over such files.
//!
//! The table is an allow-list. A word the table does not list (an unknown option, an abbreviated
//! long option, a value where none is taken, an option after the first operand) makes the command
//! ask; nothing here tries to recognise a dangerous option. Options are read the way GNU
//! `getopt_long` reads them for what is accepted: clusters (`-ln`), an option taking a value
//! swallowing the rest of its cluster or else the next word (`-n5`, `-n 5`), `--name=value` and
//! `--name value`, optional values only attached, and `--` ending the options. An option-looking
//! word or a `--` after the first operand asks, so the reading is the same whether or not
//! `POSIXLY_CORRECT` makes the program stop at the first operand.
//!
//! [`parse`] is pure: it turns a command's arguments into the operands the program will open.
//! [`Operand::vouched`] then looks at each operand's metadata and the trust map, never at a
//! file's bytes.

use std::path::{Path, PathBuf};

use crate::kernel::label::Integrity;
use crate::kernel::trust::TrustMap;

/// Whether an option takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Takes {
    Nothing,
    /// Attached (`-n5`, `--lines=5`) or the next word (`-n 5`, `--lines 5`).
    Value,
}

/// What a program does with the words that are not options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Grammar {
    /// Every operand is a file it reads, at most `max` of them; none reads standard input.
    Files { max: usize },
    /// Every operand is a file or a directory whose names and metadata it prints; none is the
    /// directory the line runs in.
    Entries { none_is_directory: bool },
    /// The first operand is a pattern unless `-e`/`--regexp` gave one; the rest are files.
    PatternThenFiles,
    /// Operands are words that are never opened.
    Words,
    /// Nothing is parsed: every argument is printed or ignored, never opened.
    Anything,
}

/// One program of the table.
struct Program {
    name: &'static str,
    short: &'static [(char, Takes)],
    long: &'static [(&'static str, Takes)],
    grammar: Grammar,
    /// Whether an option value must be a count (digits after an optional sign, then letters
    /// other than `f`): `tail` reads `-cf` as "follow" when it is the only option.
    counts_only: bool,
}

use Takes::{Nothing as N, Value as V};

const MANY: usize = usize::MAX;

/// The table. Written for GNU coreutils and GNU grep; every option listed only changes what is
/// printed from the files named as operands.
const TABLE: &[Program] = &[
    Program {
        name: "ls",
        short: &[
            ('a', N),
            ('A', N),
            ('b', N),
            ('B', N),
            ('c', N),
            ('C', N),
            ('d', N),
            ('F', N),
            ('g', N),
            ('G', N),
            ('h', N),
            ('H', N),
            ('i', N),
            ('k', N),
            ('l', N),
            ('m', N),
            ('n', N),
            ('N', N),
            ('o', N),
            ('p', N),
            ('q', N),
            ('Q', N),
            ('r', N),
            ('s', N),
            ('S', N),
            ('t', N),
            ('u', N),
            ('U', N),
            ('v', N),
            ('x', N),
            ('X', N),
            ('1', N),
        ],
        long: &[
            ("all", N),
            ("almost-all", N),
            ("classify", N),
            ("directory", N),
            ("human-readable", N),
            ("ignore-backups", N),
            ("inode", N),
            ("numeric-uid-gid", N),
            ("reverse", N),
            ("size", N),
        ],
        grammar: Grammar::Entries {
            none_is_directory: true,
        },
        counts_only: false,
    },
    Program {
        name: "cat",
        short: &[
            ('A', N),
            ('b', N),
            ('e', N),
            ('E', N),
            ('n', N),
            ('s', N),
            ('t', N),
            ('T', N),
            ('u', N),
            ('v', N),
        ],
        long: &[
            ("show-all", N),
            ("number-nonblank", N),
            ("show-ends", N),
            ("number", N),
            ("squeeze-blank", N),
            ("show-tabs", N),
            ("show-nonprinting", N),
        ],
        grammar: Grammar::Files { max: MANY },
        counts_only: false,
    },
    Program {
        name: "head",
        short: &[('c', V), ('n', V), ('q', N), ('v', N), ('z', N)],
        long: &[
            ("bytes", V),
            ("lines", V),
            ("quiet", N),
            ("silent", N),
            ("verbose", N),
            ("zero-terminated", N),
        ],
        grammar: Grammar::Files { max: MANY },
        counts_only: true,
    },
    Program {
        name: "tail",
        short: &[('c', V), ('n', V), ('q', N), ('v', N), ('z', N)],
        long: &[
            ("bytes", V),
            ("lines", V),
            ("quiet", N),
            ("silent", N),
            ("verbose", N),
            ("zero-terminated", N),
        ],
        grammar: Grammar::Files { max: MANY },
        counts_only: true,
    },
    Program {
        name: "wc",
        short: &[('c', N), ('m', N), ('l', N), ('L', N), ('w', N)],
        long: &[
            ("bytes", N),
            ("chars", N),
            ("lines", N),
            ("max-line-length", N),
            ("words", N),
        ],
        grammar: Grammar::Files { max: MANY },
        counts_only: false,
    },
    Program {
        name: "grep",
        short: &[
            ('E', N),
            ('F', N),
            ('G', N),
            ('e', V),
            ('i', N),
            ('y', N),
            ('v', N),
            ('w', N),
            ('x', N),
            ('c', N),
            ('l', N),
            ('L', N),
            ('o', N),
            ('q', N),
            ('s', N),
            ('b', N),
            ('n', N),
            ('H', N),
            ('h', N),
            ('a', N),
            ('I', N),
            ('z', N),
            ('Z', N),
            ('T', N),
            ('m', V),
            ('A', V),
            ('B', V),
            ('C', V),
        ],
        long: &[
            ("extended-regexp", N),
            ("fixed-strings", N),
            ("basic-regexp", N),
            ("regexp", V),
            ("ignore-case", N),
            ("no-ignore-case", N),
            ("invert-match", N),
            ("word-regexp", N),
            ("line-regexp", N),
            ("count", N),
            ("files-with-matches", N),
            ("files-without-match", N),
            ("only-matching", N),
            ("quiet", N),
            ("silent", N),
            ("no-messages", N),
            ("byte-offset", N),
            ("line-number", N),
            ("with-filename", N),
            ("no-filename", N),
            ("text", N),
            ("null-data", N),
            ("null", N),
            ("initial-tab", N),
            ("max-count", V),
            ("after-context", V),
            ("before-context", V),
            ("context", V),
        ],
        grammar: Grammar::PatternThenFiles,
        counts_only: false,
    },
    Program {
        name: "nl",
        short: &[
            ('b', V),
            ('i', V),
            ('n', V),
            ('p', N),
            ('s', V),
            ('v', V),
            ('w', V),
        ],
        long: &[
            ("body-numbering", V),
            ("line-increment", V),
            ("number-format", V),
            ("no-renumber", N),
            ("number-separator", V),
            ("starting-line-number", V),
            ("number-width", V),
        ],
        grammar: Grammar::Files { max: MANY },
        counts_only: false,
    },
    Program {
        name: "sort",
        short: &[
            ('b', N),
            ('c', N),
            ('C', N),
            ('d', N),
            ('f', N),
            ('g', N),
            ('h', N),
            ('i', N),
            ('k', V),
            ('m', N),
            ('M', N),
            ('n', N),
            ('r', N),
            ('s', N),
            ('t', V),
            ('u', N),
            ('V', N),
            ('z', N),
        ],
        long: &[
            ("ignore-leading-blanks", N),
            ("dictionary-order", N),
            ("ignore-case", N),
            ("general-numeric-sort", N),
            ("human-numeric-sort", N),
            ("ignore-nonprinting", N),
            ("key", V),
            ("merge", N),
            ("month-sort", N),
            ("numeric-sort", N),
            ("reverse", N),
            ("stable", N),
            ("field-separator", V),
            ("unique", N),
            ("version-sort", N),
            ("zero-terminated", N),
        ],
        grammar: Grammar::Files { max: MANY },
        counts_only: false,
    },
    Program {
        name: "uniq",
        short: &[
            ('c', N),
            ('d', N),
            ('D', N),
            ('f', V),
            ('i', N),
            ('s', V),
            ('u', N),
            ('w', V),
            ('z', N),
        ],
        long: &[
            ("count", N),
            ("repeated", N),
            ("skip-fields", V),
            ("ignore-case", N),
            ("skip-chars", V),
            ("unique", N),
            ("check-chars", V),
            ("zero-terminated", N),
        ],
        // A second operand is the file uniq writes.
        grammar: Grammar::Files { max: 1 },
        counts_only: false,
    },
    Program {
        name: "cut",
        short: &[
            ('b', V),
            ('c', V),
            ('d', V),
            ('f', V),
            ('n', N),
            ('s', N),
            ('z', N),
        ],
        long: &[
            ("bytes", V),
            ("characters", V),
            ("delimiter", V),
            ("fields", V),
            ("complement", N),
            ("only-delimited", N),
            ("output-delimiter", V),
            ("zero-terminated", N),
        ],
        grammar: Grammar::Files { max: MANY },
        counts_only: false,
    },
    Program {
        name: "diff",
        short: &[
            ('a', N),
            ('b', N),
            ('B', N),
            ('c', N),
            ('C', V),
            ('i', N),
            ('q', N),
            ('s', N),
            ('u', N),
            ('U', V),
            ('w', N),
        ],
        long: &[
            ("text", N),
            ("ignore-space-change", N),
            ("ignore-blank-lines", N),
            ("ignore-case", N),
            ("brief", N),
            ("report-identical-files", N),
            ("ignore-all-space", N),
        ],
        // Two regular files; a directory operand asks (see `Operand::vouched`).
        grammar: Grammar::Files { max: 2 },
        counts_only: false,
    },
    Program {
        name: "cmp",
        short: &[('b', N), ('l', N), ('s', N)],
        long: &[
            ("print-bytes", N),
            ("verbose", N),
            ("quiet", N),
            ("silent", N),
        ],
        // Operands after the second are offsets into the files; none are taken.
        grammar: Grammar::Files { max: 2 },
        counts_only: false,
    },
    Program {
        name: "pwd",
        short: &[('L', N), ('P', N)],
        long: &[("logical", N), ("physical", N)],
        grammar: Grammar::Files { max: 0 },
        counts_only: false,
    },
    Program {
        name: "echo",
        short: &[],
        long: &[],
        grammar: Grammar::Anything,
        counts_only: false,
    },
    Program {
        name: "printf",
        short: &[],
        long: &[],
        grammar: Grammar::Anything,
        counts_only: false,
    },
    Program {
        name: "true",
        short: &[],
        long: &[],
        grammar: Grammar::Anything,
        counts_only: false,
    },
    Program {
        name: "false",
        short: &[],
        long: &[],
        grammar: Grammar::Anything,
        counts_only: false,
    },
    Program {
        name: "basename",
        short: &[('a', N), ('s', V), ('z', N)],
        long: &[("multiple", N), ("suffix", V), ("zero", N)],
        grammar: Grammar::Words,
        counts_only: false,
    },
    Program {
        name: "dirname",
        short: &[('z', N)],
        long: &[("zero", N)],
        grammar: Grammar::Words,
        counts_only: false,
    },
    Program {
        name: "stat",
        short: &[('c', V), ('f', N), ('L', N), ('t', N)],
        long: &[
            ("dereference", N),
            ("file-system", N),
            ("format", V),
            ("printf", V),
            ("terse", N),
        ],
        grammar: Grammar::Entries {
            none_is_directory: false,
        },
        counts_only: false,
    },
    Program {
        name: "md5sum",
        short: &[('b', N), ('t', N), ('z', N)],
        long: &[("binary", N), ("text", N), ("tag", N), ("zero", N)],
        grammar: Grammar::Files { max: MANY },
        counts_only: false,
    },
    Program {
        name: "sha256sum",
        short: &[('b', N), ('t', N), ('z', N)],
        long: &[("binary", N), ("text", N), ("tag", N), ("zero", N)],
        grammar: Grammar::Files { max: MANY },
        counts_only: false,
    },
];

/// A path a table program will open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operand<'a> {
    /// A file whose bytes it reads.
    File(&'a str),
    /// A file or a directory whose names and metadata it prints.
    Entry(&'a str),
}

/// Why a command is not read-only as written; the command is then asked about.
pub type Asks = String;

/// The operands a command of the table will open, or why it asks.
pub fn parse<'a>(program: &str, arguments: &'a [String]) -> Result<Vec<Operand<'a>>, Asks> {
    let Some(table) = TABLE.iter().find(|p| p.name == program) else {
        return Err(format!("{program} is not in the read-only table"));
    };
    if table.grammar == Grammar::Anything {
        return Ok(Vec::new());
    }
    let mut operands: Vec<&'a str> = Vec::new();
    let mut pattern_given = false;
    let mut options_ended = false;
    let mut words = arguments.iter();
    while let Some(word) = words.next() {
        let word = word.as_str();
        if options_ended {
            operands.push(word);
            continue;
        }
        let option_like = word.starts_with('-') && word != "-";
        if option_like && !operands.is_empty() {
            return Err(format!(
                "`{word}` comes after an operand, where a program may read it either way"
            ));
        }
        if word == "--" {
            options_ended = true;
            continue;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            let Some(&(_, takes)) = table.long.iter().find(|(n, _)| *n == name) else {
                return Err(format!(
                    "--{name} is not an option {program} is known to read with"
                ));
            };
            let value = match (takes, attached) {
                (Takes::Nothing, Some(_)) => {
                    return Err(format!("--{name} takes no value"));
                }
                (Takes::Nothing, None) => None,
                (Takes::Value, Some(v)) => Some(v),
                (Takes::Value, None) => match words.next() {
                    Some(v) => Some(v.as_str()),
                    None => return Err(format!("--{name} lacks its value")),
                },
            };
            check_value(table, &format!("--{name}"), value)?;
            pattern_given |= program == "grep" && name == "regexp";
            continue;
        }
        if option_like {
            let cluster = &word[1..];
            for (at, letter) in cluster.char_indices() {
                let Some(&(_, takes)) = table.short.iter().find(|(c, _)| *c == letter) else {
                    return Err(format!(
                        "-{letter} is not an option {program} is known to read with"
                    ));
                };
                pattern_given |= program == "grep" && letter == 'e';
                if takes == Takes::Value {
                    let rest = &cluster[at + letter.len_utf8()..];
                    let value = if rest.is_empty() {
                        match words.next() {
                            Some(v) => v.as_str(),
                            None => return Err(format!("-{letter} lacks its value")),
                        }
                    } else {
                        rest
                    };
                    check_value(table, &format!("-{letter}"), Some(value))?;
                    break;
                }
            }
            continue;
        }
        operands.push(word);
    }
    let opened: Vec<Operand<'a>> = match table.grammar {
        Grammar::Anything | Grammar::Words => Vec::new(),
        Grammar::Files { max } => {
            if operands.len() > max {
                return Err(format!(
                    "{program} takes at most {max} file operands as read-only"
                ));
            }
            operands.into_iter().map(Operand::File).collect()
        }
        Grammar::PatternThenFiles => {
            let skip = usize::from(!pattern_given);
            operands.into_iter().skip(skip).map(Operand::File).collect()
        }
        Grammar::Entries { none_is_directory } => {
            if operands.is_empty() && none_is_directory {
                vec![Operand::Entry(".")]
            } else {
                operands.into_iter().map(Operand::Entry).collect()
            }
        }
    };
    for operand in &opened {
        let (Operand::File(word) | Operand::Entry(word)) = operand;
        if *word == "-" {
            return Err("`-` reads standard input by name".into());
        }
        // `+N` is an old way of writing an option for tail, sort and uniq.
        if word.starts_with('+') {
            return Err(format!("`{word}` may be read as an option"));
        }
    }
    Ok(opened)
}

/// Refuses an option value the program could read in a second way (see `Program::counts_only`).
fn check_value(table: &Program, option: &str, value: Option<&str>) -> Result<(), Asks> {
    let Some(value) = value else { return Ok(()) };
    if !table.counts_only {
        return Ok(());
    }
    let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
    let number_end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    let suffix = &digits[number_end..];
    if number_end == 0 || !suffix.chars().all(|c| c.is_ascii_alphabetic() && c != 'f') {
        return Err(format!("{option} {value} is not a count"));
    }
    Ok(())
}

/// Where the files of a line may come from: the workspace and the directories the person added,
/// each as written and with its links resolved.
pub struct Places {
    roots: Vec<PathBuf>,
}

impl Places {
    pub fn new<'a>(roots: impl IntoIterator<Item = &'a PathBuf>) -> Places {
        let mut all = Vec::new();
        for root in roots {
            all.push(root.clone());
            if let Ok(real) = std::fs::canonicalize(root) {
                all.push(real);
            }
        }
        Places { roots: all }
    }

    /// Whether `path` lies in one of the places.
    pub fn contain(&self, path: &Path) -> bool {
        self.roots.iter().any(|root| path.starts_with(root))
    }
}

impl Operand<'_> {
    /// Whether the program may open this operand unasked: with links resolved it is a regular file
    /// (or, for an entry, a directory) inside an opened place that the trust map trusts, and
    /// a directory has no untrusted rule within it. A link is vouched for only where the place the
    /// link itself sits is trusted too, since `ls -l` and `stat` print where it points. Only
    /// metadata is looked at. `checked(real)` also vouches for a file operand that is no link and
    /// that no rule covers: the content-trust helper passed the bytes it read there.
    pub fn vouched_or_checked(
        &self,
        directory: &Path,
        places: &Places,
        trust: &TrustMap,
        checked: &dyn Fn(&Path) -> bool,
    ) -> bool {
        let (Operand::File(word) | Operand::Entry(word)) = self;
        let lexical = directory.join(word);
        let Ok(real) = std::fs::canonicalize(&lexical) else {
            return false;
        };
        let Ok(meta) = std::fs::metadata(&real) else {
            return false;
        };
        let trusted =
            |p: &Path| places.contain(p) && trust.integrity_of(p) == Some(Integrity::Trusted);
        let kind_allowed = match self {
            Operand::File(_) => meta.is_file(),
            Operand::Entry(_) => meta.is_file() || meta.is_dir(),
        };
        let is_link = std::fs::symlink_metadata(&lexical).is_ok_and(|m| m.file_type().is_symlink());
        if !kind_allowed {
            return false;
        }
        if !trusted(&real) {
            // Only a file's bytes can be checked; a directory's names and a link's target cannot.
            let by_check = matches!(self, Operand::File(_))
                && !is_link
                && places.contain(&real)
                && trust.integrity_of(&real).is_none()
                && checked(&real);
            return by_check;
        }
        if meta.is_dir() && trust.untrusted_within(&real) {
            return false;
        }
        if is_link {
            let (Some(parent), Some(name)) = (lexical.parent(), lexical.file_name()) else {
                return false;
            };
            let Ok(parent) = std::fs::canonicalize(parent) else {
                return false;
            };
            return trusted(&parent.join(name));
        }
        true
    }

    /// The file behind a file operand whose bytes a check could vouch for: a regular file, no
    /// link, inside an opened place, that no rule covers. Only metadata is looked at.
    pub fn checkable(
        &self,
        directory: &Path,
        places: &Places,
        trust: &TrustMap,
    ) -> Option<PathBuf> {
        let Operand::File(word) = self else {
            return None;
        };
        let lexical = directory.join(word);
        let link = std::fs::symlink_metadata(&lexical).ok()?;
        if link.file_type().is_symlink() || !link.is_file() {
            return None;
        }
        let real = std::fs::canonicalize(&lexical).ok()?;
        (places.contain(&real) && trust.integrity_of(&real).is_none()).then_some(real)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::trust::{RuleOrigin, Scope, TrustRule};

    fn words(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_string).collect()
    }

    /// The parse of a line as text: the operands it opens, or `asks`.
    fn reading(line: &str) -> String {
        let mut all = words(line);
        let program = all.remove(0);
        match parse(&program, &all) {
            Ok(operands) => {
                let shown: Vec<String> = operands
                    .iter()
                    .map(|o| match o {
                        Operand::File(w) => format!("file {w}"),
                        Operand::Entry(w) => format!("entry {w}"),
                    })
                    .collect();
                format!("reads [{}]", shown.join(", "))
            }
            Err(_) => "asks".into(),
        }
    }

    // Verifies: RUNTOOL-3, RUNTOOL-8
    #[test]
    fn read_only_options_are_an_allow_list_read_the_way_getopt_reads_them() {
        let cases = [
            // The ordinary reads.
            ("ls", "reads [entry .]"),
            ("ls -la src", "reads [entry src]"),
            ("cat a.md b.md", "reads [file a.md, file b.md]"),
            ("head -n 5 a.md", "reads [file a.md]"),
            ("head -n5 a.md", "reads [file a.md]"),
            ("head --lines=5 a.md", "reads [file a.md]"),
            ("head --lines 5 a.md", "reads [file a.md]"),
            ("tail -n +3 a.md", "reads [file a.md]"),
            ("wc -l a.md", "reads [file a.md]"),
            ("grep -n pattern a.md", "reads [file a.md]"),
            ("grep -rn pattern a.md", "asks"),
            ("grep -e one -e two a.md", "reads [file a.md]"),
            ("grep -ne one a.md", "reads [file a.md]"),
            ("grep --regexp=x a.md", "reads [file a.md]"),
            ("grep x", "reads []"),
            ("grep -- -x a.md", "reads [file a.md]"),
            ("sort -k2,2n -t , a.csv", "reads [file a.csv]"),
            ("uniq -c a.txt", "reads [file a.txt]"),
            ("cut -d: -f1 a.txt", "reads [file a.txt]"),
            ("diff -u a b", "reads [file a, file b]"),
            ("cmp a b", "reads [file a, file b]"),
            ("echo --compress-program=sh -f /etc/passwd", "reads []"),
            ("printf %s\\n -x", "reads []"),
            ("basename -s .rs src/main.rs", "reads []"),
            ("dirname -- -x/y", "reads []"),
            ("stat -c %s a.md", "reads [entry a.md]"),
            ("pwd", "reads []"),
            ("sha256sum a.md", "reads [file a.md]"),
            ("cat -- -n", "reads [file -n]"),
            // Executing, writing, reading files by name through options.
            ("sort -S 1 --compress-program=sh AGENTS.md", "asks"),
            ("sort --compress-program sh AGENTS.md", "asks"),
            ("sort --compress=sh AGENTS.md", "asks"),
            ("sort -o out a", "asks"),
            ("sort -oout a", "asks"),
            ("sort -nro out a", "asks"),
            ("sort --output=out a", "asks"),
            ("sort -T /tmp a", "asks"),
            ("sort --files0-from=list", "asks"),
            ("sort --files0 list", "asks"),
            ("sort --random-source=/dev/zero -R a", "asks"),
            ("uniq AGENTS.md /home/x/.bash_profile", "asks"),
            ("uniq -c AGENTS.md out", "asks"),
            ("wc --files0-from=list", "asks"),
            ("wc --files0=list", "asks"),
            ("grep -f patterns a", "asks"),
            ("grep --file=patterns a", "asks"),
            ("grep -r x .", "asks"),
            ("grep -d recurse x .", "asks"),
            ("grep --include=*.rs -r x", "asks"),
            ("diff --from-file=vendor/x -", "asks"),
            ("diff --to-file vendor/x a", "asks"),
            ("diff -r a b", "asks"),
            ("diff -N a b", "asks"),
            ("diff -l a b", "asks"),
            ("diff a b c", "asks"),
            ("diff a -", "asks"),
            ("cat -", "asks"),
            ("md5sum -c sums", "asks"),
            ("md5sum --check sums", "asks"),
            ("sha256sum --check=x", "asks"),
            ("cmp a b 10 20", "asks"),
            ("cmp -i 10 a b", "asks"),
            // Following for ever.
            ("tail -f a", "asks"),
            ("tail -F a", "asks"),
            ("tail --follow a", "asks"),
            ("tail --follow=name a", "asks"),
            ("tail --fo a", "asks"),
            ("tail -nf a", "asks"),
            ("tail -cf a", "asks"),
            ("tail -c f a", "asks"),
            ("tail -5f a", "asks"),
            ("tail +5f a", "asks"),
            ("tail --retry a", "asks"),
            ("tail --pid=1 -f a", "asks"),
            // Spellings: options after operands, abbreviations, values where none is taken.
            ("cat a -n", "asks"),
            ("cat a -- b", "asks"),
            ("grep x a -r", "asks"),
            ("sort a -o out", "asks"),
            ("cat --number=3 a", "asks"),
            ("cat --num a", "asks"),
            ("head -n", "asks"),
            ("ls -R", "asks"),
            ("ls --recursive", "asks"),
            ("ls -I x", "asks"),
            ("ls -L dir", "asks"),
            ("grep -P x a", "asks"),
            ("head -5 a", "asks"),
            ("uniq +3 a", "asks"),
            ("pwd extra", "asks"),
            ("env cat a", "asks"),
            ("sh -c id", "asks"),
            ("find . -name x", "asks"),
            ("xargs cat", "asks"),
        ];
        let got: Vec<String> = cases
            .iter()
            .map(|(line, _)| format!("{line} => {}", reading(line)))
            .collect();
        let want: Vec<String> = cases
            .iter()
            .map(|(line, expected)| format!("{line} => {expected}"))
            .collect();
        assert_eq!(got, want);
    }

    // Verifies: RUNTOOL-3
    #[test]
    fn the_spec_names_every_program_of_the_read_only_table() {
        let spec =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/run.md"))
                .expect("specs/run.md");
        let clause = spec
            .split("### RUNTOOL-3")
            .nth(1)
            .and_then(|rest| rest.split("\n### ").next())
            .expect("RUNTOOL-3");
        let missing: Vec<&str> = TABLE
            .iter()
            .map(|p| p.name)
            .filter(|name| !clause.contains(&format!("`{name}`")))
            .collect();
        assert!(missing.is_empty(), "RUNTOOL-3 leaves out {missing:?}");
    }

    // Verifies: RUNTOOL-8, TRUST-9
    #[test]
    fn an_operand_runs_unasked_only_as_a_trusted_regular_file_in_an_opened_place() {
        let work = tempfile::tempdir().expect("workspace");
        let outside = tempfile::tempdir().expect("outside");
        let root = std::fs::canonicalize(work.path()).expect("root");
        let elsewhere = std::fs::canonicalize(outside.path()).expect("outside");
        std::fs::write(root.join("notes.md"), "x").expect("write");
        std::fs::write(root.join("plain.md"), "x").expect("write");
        std::fs::create_dir_all(root.join("docs/inner")).expect("mkdir");
        std::fs::write(root.join("docs/inner/a.md"), "x").expect("write");
        std::fs::create_dir_all(root.join("vendor")).expect("mkdir");
        std::fs::write(root.join("vendor/x.md"), "x").expect("write");
        std::fs::write(elsewhere.join("secret"), "x").expect("write");
        let link = |target: &Path, name: &str| {
            std::os::unix::fs::symlink(target, root.join(name)).expect("symlink");
        };
        link(&elsewhere.join("secret"), "to-outside");
        link(Path::new("/dev/zero"), "to-zero");
        link(&root.join("notes.md"), "vendor/to-notes");
        link(&root.join("notes.md"), "docs/to-notes");
        let fifo = root.join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        let mut trust = TrustMap::default();
        let vouch = |trust: &mut TrustMap, path: PathBuf, scope, origin| {
            trust.restore(TrustRule {
                path,
                scope,
                origin,
            });
        };
        for name in ["notes.md", "to-outside", "to-zero", "pipe", "missing"] {
            vouch(&mut trust, root.join(name), Scope::File, RuleOrigin::Person);
        }
        vouch(
            &mut trust,
            root.join("docs"),
            Scope::Directory,
            RuleOrigin::Person,
        );
        vouch(
            &mut trust,
            elsewhere.join("secret"),
            Scope::File,
            RuleOrigin::Person,
        );
        let places = Places::new([&root]);
        let cases = [
            (Operand::File("notes.md"), true),
            (Operand::File("./notes.md"), true),
            (Operand::File("docs/inner/a.md"), true),
            (Operand::File("docs/to-notes"), true),
            (Operand::Entry("docs"), true),
            (Operand::Entry("notes.md"), true),
            (Operand::File("plain.md"), false),
            (Operand::File("vendor/x.md"), false),
            (Operand::File("vendor/to-notes"), false),
            (Operand::File("to-outside"), false),
            (Operand::File("to-zero"), false),
            (Operand::File("pipe"), false),
            (Operand::File("missing"), false),
            (Operand::File("docs"), false),
            (Operand::Entry("vendor"), false),
            (Operand::Entry("."), false),
        ];
        let got: Vec<String> = cases
            .iter()
            .map(|(o, _)| {
                format!(
                    "{o:?} {}",
                    o.vouched_or_checked(&root, &places, &trust, &|_| false)
                )
            })
            .collect();
        let want: Vec<String> = cases.iter().map(|(o, v)| format!("{o:?} {v}")).collect();
        assert_eq!(got, want);
        // An untrusted mark inside a trusted directory keeps its names back.
        trust.mark_written_untrusted(root.join("docs/inner/a.md"), None);
        assert!(!Operand::Entry("docs").vouched_or_checked(&root, &places, &trust, &|_| false));
        assert!(Operand::File("notes.md").vouched_or_checked(&root, &places, &trust, &|_| false));
        // A deny rule on a file the person also vouched for: asked, never opened unasked, even
        // where a check passed its bytes; and the directory holding it keeps its names back.
        trust.restore(TrustRule {
            path: root.join("notes.md"),
            scope: Scope::File,
            origin: RuleOrigin::Denied,
        });
        for operand in [
            Operand::File("notes.md"),
            Operand::File("./notes.md"),
            Operand::File("docs/to-notes"),
            Operand::Entry("notes.md"),
        ] {
            assert!(
                !operand.vouched_or_checked(&root, &places, &trust, &|_| true),
                "{operand:?}"
            );
            assert_eq!(operand.checkable(&root, &places, &trust), None);
        }
    }
}
