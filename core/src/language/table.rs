//! The fixed table (seed 004): the languages, the extensions that call for each, how each server
//! is launched, and the limits every server is held to.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::process::Withheld;

/// The languages the table knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    Rust,
    TypeScript,
    Python,
    Go,
    C,
}

/// File extensions, by language.
const EXTENSIONS: &[(Language, &[&str])] = &[
    (Language::Rust, &["rs"]),
    (
        Language::TypeScript,
        &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"],
    ),
    (Language::Python, &["py", "pyi"]),
    (Language::Go, &["go"]),
    (
        Language::C,
        &[
            "c", "h", "cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "h++", "ipp",
        ],
    ),
];

impl Language {
    pub const ALL: [Language; 5] = [
        Language::Rust,
        Language::TypeScript,
        Language::Python,
        Language::Go,
        Language::C,
    ];

    /// The language a file's extension calls for, if the table has one.
    pub fn of(path: &Path) -> Option<Language> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        EXTENSIONS
            .iter()
            .find(|(_, exts)| exts.contains(&ext.as_str()))
            .map(|(l, _)| *l)
    }

    /// The name people use for it.
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "Rust",
            Language::TypeScript => "TypeScript/JavaScript",
            Language::Python => "Python",
            Language::Go => "Go",
            Language::C => "C/C++",
        }
    }

    /// A short identifier for status and logs.
    pub fn id(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::TypeScript => "typescript",
            Language::Python => "python",
            Language::Go => "go",
            Language::C => "c",
        }
    }

    /// The binary looked for on `PATH` (`bravebot doctor` lists the same).
    pub fn binary(self) -> &'static str {
        match self {
            Language::Rust => "rust-analyzer",
            Language::TypeScript => "typescript-language-server",
            Language::Python => "pyright-langserver",
            Language::Go => "gopls",
            Language::C => "clangd",
        }
    }

    /// What starting its server runs, for the question put to the person.
    pub fn what_it_runs(self) -> &'static str {
        match self {
            Language::Rust => {
                "it runs cargo, so build.rs scripts and proc macros from the project and its dependencies execute"
            }
            Language::TypeScript => {
                "it runs the TypeScript the project carries under node_modules (in this directory or one above it) before its own copy"
            }
            Language::Python => {
                "it runs the python3 on your PATH, whose environment's .pth files execute as it starts (with a virtual environment active, those come from the project's dependencies)"
            }
            Language::Go => {
                "it runs the go command, which builds the project and its dependencies to answer"
            }
            Language::C => {
                "it runs the compilers named by the project's compile_commands.json to learn their settings"
            }
        }
    }

    /// The `languageId` of a document sent with `didOpen`.
    pub fn document_id(path: &Path) -> &'static str {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default()
            .to_ascii_lowercase();
        match ext.as_str() {
            "rs" => "rust",
            "ts" | "mts" | "cts" => "typescript",
            "tsx" => "typescriptreact",
            "js" | "mjs" | "cjs" => "javascript",
            "jsx" => "javascriptreact",
            "py" | "pyi" => "python",
            "go" => "go",
            "c" | "h" => "c",
            _ => "cpp",
        }
    }
}

/// The extensions the table covers, for a message saying it has no server for another one.
pub fn covered_extensions() -> String {
    EXTENSIONS
        .iter()
        .map(|(l, exts)| format!("{} ({})", l.name(), exts.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// How long things may take.
#[derive(Clone, Debug)]
pub struct Limits {
    /// For the `initialize` answer.
    pub initialize: Duration,
    /// For the answer to each request.
    pub request: Duration,
    /// For a new server to settle (its first question).
    pub settle: Duration,
    /// Quiet needed, the first time, before a server without open progress counts as settled.
    pub quiet: Duration,
    /// For a server that announced new work to finish it (later questions).
    pub busy: Duration,
    /// For `shutdown` to be answered, and again for the process to go after `exit`.
    pub shutdown: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            initialize: Duration::from_secs(60),
            request: Duration::from_secs(30),
            settle: Duration::from_secs(20),
            quiet: Duration::from_millis(500),
            busy: Duration::from_secs(5),
            shutdown: Duration::from_secs(2),
        }
    }
}

/// What starting a language's server means: the program and its arguments, as the person is
/// asked about them.
#[derive(Clone, Debug)]
pub struct Launch {
    pub language: Language,
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The command line shown to the person.
    pub shown: String,
    pub env: Vec<(String, String)>,
    /// Inherited variables the server is not handed: the session's credential variables.
    pub withheld: Withheld,
    pub initialization_options: Value,
    /// A directory made before the server starts, for its index.
    pub cache: Option<PathBuf>,
}
