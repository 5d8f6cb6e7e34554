//! The compiler's quoting against Python's `shlex.split(line, posix=True)`, run as a real
//! `python3` subprocess, over lines of everyday shell use.
//!
//! Every line is one both should accept: no glob, brace list, `~` or `#` at the start of a word
//! outside quotes, no `$` outside single quotes, no `\$` inside double quotes (the shell and this
//! compiler read it as `$`, shlex keeps the backslash), no redirects (their targets become
//! absolute paths) and no assignment before a program. Operators (`|`, `&&`, `||`, `;`) are
//! written with spaces around them, so shlex yields each as a word of its own; the plan is laid
//! out as the same flat list, with each operator between its steps, and in a line of several
//! commands no argument may equal an operator, so an argument cannot stand in for one.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};

use bravebot_core::cmdline::{DirectoryEntry, Environment, Join, Plan, Sequence, Step, compile};

/// Every program is found, as `/usr/bin/<name>`; every path names an executable.
struct AnyProgram;

impl Environment for AnyProgram {
    fn directory(&self) -> &Path {
        Path::new("/work/proj")
    }
    fn home(&self) -> Option<&Path> {
        Some(Path::new("/home/me"))
    }
    fn find_program(&self, name: &str) -> Option<PathBuf> {
        Some(Path::new("/usr/bin").join(name))
    }
    fn is_executable(&self, _path: &Path) -> bool {
        true
    }
    fn list_directory(&self, _path: &Path) -> Option<Vec<DirectoryEntry>> {
        None
    }
}

const OPERATORS: &[&str] = &["|", "&&", "||", ";"];

fn flatten_sequence(sequence: &Sequence, out: &mut Vec<String>) {
    flatten_step(sequence.first(), out);
    for (join, step) in sequence.rest() {
        out.push(
            match join {
                Join::And => "&&",
                Join::Or => "||",
                Join::Then => ";",
            }
            .to_owned(),
        );
        flatten_step(step, out);
    }
}

fn flatten_step(step: &Step, out: &mut Vec<String>) {
    match step {
        Step::Pipeline(pipeline) => {
            for (index, command) in pipeline.commands().iter().enumerate() {
                if index > 0 {
                    out.push("|".to_owned());
                }
                out.extend(command.argv().iter().cloned());
            }
        }
        Step::Group(_) => panic!("the corpus holds no groups"),
    }
}

fn flatten(plan: &Plan) -> Vec<String> {
    let mut out = Vec::new();
    flatten_sequence(plan.sequence(), &mut out);
    out
}

/// Python's reading of each line, from one `python3` process.
fn shlex_split(lines: &[&str]) -> Vec<Vec<String>> {
    let script = "import json, shlex, sys\n\
                  lines = json.load(sys.stdin)\n\
                  json.dump([shlex.split(line, posix=True) for line in lines], sys.stdout)\n";
    let mut child = Process::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python3 runs (the corpus test compares with Python's shlex)");
    let input = serde_json::to_vec(lines).expect("the corpus is JSON");
    child
        .stdin
        .take()
        .expect("python3's stdin is piped")
        .write_all(&input)
        .expect("python3 reads the corpus");
    let output = child.wait_with_output().expect("python3 finishes");
    assert!(
        output.status.success(),
        "python3 failed: {:?}",
        output.status
    );
    serde_json::from_slice(&output.stdout).expect("python3 answers with JSON lists of strings")
}

const CORPUS: &[&str] = &[
    // git
    "git status --short",
    "git log --oneline -20",
    "git log --format='%h %an %s' -n 5",
    r#"git log --format="%H %ad" --date=short"#,
    "git log --author='Jane Doe' --since='2 weeks ago'",
    "git log -S 'fn compile' --oneline",
    "git log --grep='fix(run):' --oneline",
    "git diff --stat HEAD~3",
    "git diff --name-only origin/main...HEAD",
    "git diff -- 'src/my file.rs'",
    "git show HEAD:core/src/lib.rs",
    "git show --stat 'HEAD^'",
    r#"git commit -m "run: compile command lines""#,
    "git commit -m 'fix: handle \"quoted\" paths'",
    r#"git commit -m "don't panic on empty input""#,
    "git commit --amend --no-edit",
    "git add -- core/src/run/mod.rs core/src/run/lex.rs",
    "git checkout -b feature/run-compiler",
    "git switch -c 'topic/with space'",
    "git rebase --onto main topic~2 topic",
    "git stash push -m 'work in progress'",
    "git stash list",
    "git blame -L 10,40 core/src/run/compile.rs",
    "git grep -n 'TODO' -- '*.rs'",
    "git grep -e 'unwrap()' --and -e 'expect('",
    "git rev-parse --abbrev-ref HEAD",
    "git branch --merged main",
    "git tag -a v0.1.0 -m 'first release'",
    "git remote -v",
    "git fetch origin main",
    "git push origin HEAD:refs/heads/review",
    "git cherry-pick -x abc1234",
    "git config --get user.email",
    "git ls-files -- '*.toml'",
    "git shortlog -sn --no-merges",
    "git clean -nd",
    "git worktree add ../wt-review review",
    "git log --pretty=format:'%h%x09%s' --reverse",
    "git diff --word-diff=color",
    "git log -G'[0-9]{3}' --oneline",
    // grep and ripgrep
    "grep -rn 'fn main' src",
    "grep -rn \"fn main\" src",
    "grep -E '^(pub )?fn [a-z_]+' src/lib.rs",
    "grep -c 'error' build.log",
    "grep -v '^#' config.ini",
    "grep -i 'warning:' build.log",
    "grep -e 'a b' -e 'c d' notes.txt",
    "grep -F 'a.b*c' notes.txt",
    "grep -o '[A-Z][a-z]*' README.md",
    "grep -l 'use std::io' -r core",
    "grep --include='*.rs' -rn 'unsafe' .",
    "grep -n 'it'\\''s' notes.txt",
    r"grep -n 'back\slash' notes.txt",
    r#"grep -n "tab\tliteral" notes.txt"#,
    r#"grep -P '\d{4}-\d{2}-\d{2}' log.txt"#,
    "grep -w -- '-v' options.txt",
    "grep -A 3 -B 2 'panicked at' test.log",
    "grep -rn '$HOME' scripts",
    "rg -n 'impl Environment' core",
    "rg --type rust 'fn compile'",
    "rg -g '!target' 'TODO'",
    "rg -F '(' src",
    "rg -e '^\\s+pub fn' src",
    "rg --files-with-matches 'serde'",
    // find
    "find . -name '*.rs'",
    "find . -name \"*.rs\" -type f",
    "find src -type f -name '*.toml' -print",
    "find . -path ./target -prune -o -name '*.rs' -print",
    "find . -type d -name node_modules -prune",
    "find . -newer Cargo.lock -name '*.rs'",
    "find . -name '*.orig' -delete",
    r"find . -name '*.tmp' -exec rm {} \;",
    r"find . -type f -exec wc -l {} +",
    "find . -maxdepth 2 -iname 'readme*'",
    "find /tmp -mtime +7 -user me",
    "find . ! -name '*.rs' -type f",
    "find . -regex '.*/[0-9]+\\.log'",
    "find . -name 'a b.txt'",
    "find . -size +1M -printf '%s %p\\n'",
    // cargo and rust
    "cargo build --release",
    "cargo test -p bravebot-core run::",
    "cargo test -p bravebot-core --test shlex_corpus",
    "cargo test -- --nocapture --test-threads=1",
    "cargo clippy --all-targets -- -D warnings",
    "cargo run -- --config 'a b.toml'",
    "cargo run --bin bravebot -- exec 'list the files'",
    "cargo doc --no-deps --open",
    "cargo tree -i serde --edges normal",
    "cargo add serde --features derive",
    "cargo fmt -- --check",
    "cargo bench --bench search -- 'literal/short'",
    "cargo metadata --format-version 1",
    "cargo update -p tokio --precise 1.38.0",
    "rustc --edition 2024 --crate-type lib lib.rs",
    "rustfmt --edition 2024 core/src/run/compile.rs",
    "rustup component add clippy rustfmt",
    // sed and awk
    "sed -e 's/a b/c/' notes.txt",
    "sed -n '1,10p' notes.txt",
    "sed -i.bak 's/foo/bar/g' config.ini",
    "sed -E 's/([0-9]+)/<\\1>/g' numbers.txt",
    "sed -e '/^$/d' notes.txt",
    "sed 's/\"//g' quoted.csv",
    r#"sed "s/'//g" quoted.csv"#,
    "sed -n '$p' notes.txt",
    "sed 's|/usr/local|/opt|' paths.txt",
    "sed -e 's/;/ ; /g' notes.txt",
    "awk '{print $1}' notes.txt",
    "awk -F: '{print $1, $3}' /etc/passwd",
    "awk 'NR > 1 && $3 > 100 {sum += $3} END {print sum}' data.csv",
    "awk -v OFS='\\t' '{print $2, $1}' pairs.txt",
    r#"awk 'BEGIN { FS = "," } { print $NF }' data.csv"#,
    "awk '/error/ {count++} END {print count}' build.log",
    "awk 'length($0) > 100' src/lib.rs",
    // files and text
    "ls -la",
    "ls  -l   --color=never",
    "ls -1 'a b' 'c d'",
    "cat README.md",
    "cat -n core/src/lib.rs",
    "head -n 20 core/src/run/compile.rs",
    "tail -f server.log",
    "tail -n +5 data.csv",
    "wc -l core/src/run/lex.rs",
    "sort -u names.txt",
    "sort -t, -k2,2n data.csv",
    "sort -k 3 -r 'scores file.txt'",
    "uniq -c sorted.txt",
    "cut -d, -f1,3 data.csv",
    "cut -d' ' -f2 notes.txt",
    "tr '[:lower:]' '[:upper:]'",
    "tr -d '\\r'",
    "tr -s ' '",
    "paste -sd, numbers.txt",
    "column -t -s, data.csv",
    "diff -u old.txt new.txt",
    "diff -r 'dir a' 'dir b'",
    "cmp -l a.bin b.bin",
    "comm -12 a.txt b.txt",
    "xxd -l 64 image.png",
    "od -c notes.txt",
    "file --mime-type image.png",
    "stat -c '%s %n' Cargo.toml",
    "du -sh target",
    "df -h .",
    "touch 'new file.txt'",
    "mkdir -p 'build/out dir'",
    "cp -r src 'src backup'",
    "mv 'old name.txt' new_name.txt",
    "rm -f 'a b.txt'",
    "rm -rf target/debug/incremental",
    "ln -s ../shared/STYLE.md STYLE.md",
    "chmod +x scripts/test.sh",
    "chmod 0644 'read me.txt'",
    "realpath ../shared",
    "basename /work/main/core/src/lib.rs .rs",
    "dirname /work/main/core/src/lib.rs",
    "tar -czf 'backup 2024.tar.gz' src",
    "tar -tzf archive.tar.gz",
    "zip -r out.zip 'my folder'",
    "unzip -l out.zip",
    "gzip -k notes.txt",
    "sha256sum Cargo.lock",
    "md5sum 'a b.txt'",
    // echo, printf, test
    "echo hello world",
    "echo 'hello   world'",
    r#"echo "hello   world""#,
    "echo \"; rm -rf /\"",
    "echo '> out.txt'",
    "echo 'a && b || c'",
    r#"echo "it's fine""#,
    "echo 'say \"hi\"'",
    r#"echo "a\"b""#,
    r#"echo "back\\slash""#,
    r"echo a\ b c\\d",
    r"echo \'single\'",
    r#"echo \"double\""#,
    "echo ''",
    "echo '' '' x",
    "echo a'b'c\"d\"e",
    "echo -n 'no newline'",
    "echo -e 'tab\\there'",
    "echo 'ünïcödé' '日本語' '🚀'",
    "echo naïve café",
    "printf '%s\\n' one two three",
    "printf '%-10s|%5d\\n' name 42",
    r#"printf "%s=%s\n" key value"#,
    "printf '%%'",
    "test -f Cargo.toml",
    "test -n 'x' -a -d src",
    "[ -f Cargo.toml ]",
    "true",
    "false",
    "sleep 0.1",
    "env -i PATH=/usr/bin ls",
    "date +%Y-%m-%d",
    "date -d '2 days ago' '+%F'",
    "uname -a",
    "which python3",
    // other tools
    "python3 -c 'print(1 + 1)'",
    r#"python3 -c "import sys; print(sys.version)""#,
    "python3 -m json.tool data.json",
    "node -e 'console.log(process.version)'",
    "jq '.dependencies | keys' package.json",
    r#"jq -r '.[] | "\(.name) \(.version)"' list.json"#,
    "jq --arg name 'a b' '.[$name]' data.json",
    "curl -fsSL 'https://example.com/api?x=1&y=2'",
    "curl -H 'Accept: application/json' -H \"Authorization: Bearer token\" https://example.com",
    "curl -X POST -d '{\"a\": 1}' https://example.com/items",
    "wget -q -O index.html https://example.com",
    "ssh -o 'StrictHostKeyChecking no' host uptime",
    "rsync -av --exclude 'target/' src/ backup/",
    "docker run --rm -it -v \"/work/proj\":/src image",
    "docker build -t 'bravebot:dev' .",
    "docker ps --format '{{.Names}}'",
    "kubectl get pods -o 'jsonpath={.items[*].metadata.name}'",
    "npm run build -- --watch",
    "npx tsc --noEmit -p tsconfig.json",
    "make -j2 test",
    "make -C build install",
    "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release",
    "go test ./... -run 'TestCompile/quoting'",
    "go build -ldflags '-s -w' -o bin/app .",
    "pytest -k 'not slow' -x tests",
    "ruff check --select E,W src",
    "shellcheck -x scripts/test.sh",
    "nvim --headless -c 'qa!'",
    "code --diff a.txt b.txt",
    "openssl rand -hex 16",
    "base64 -d encoded.txt",
    "xargs -0 -n1 echo",
    "timeout 10 cargo test",
    "nice -n 10 cargo build",
    "strace -f -e trace=open,openat ls",
    "hyperfine --warmup 3 'ls -la'",
    "./scripts/test.sh --quick",
    "./configure --prefix=/usr/local",
    "/usr/bin/env python3 --version",
    "../tools/bin/lint 'src/a b.rs'",
    // with operators, spaced
    "git log --oneline | head -5",
    "cat notes.txt | sort | uniq -c | sort -rn",
    "grep -rn 'TODO' src | wc -l",
    "cargo build && cargo test",
    "cargo fmt --check || echo 'needs formatting'",
    "make clean ; make",
    "git diff --stat && git status --short",
    "ps aux | grep 'cargo test' | grep -v grep",
    "echo 'a|b' | tr '|b' ',c'",
    "find . -name '*.rs' | xargs grep -l 'unsafe'",
    "git fetch && git rebase origin/main || git rebase --abort",
    "cargo test -p core && echo 'core ok' ; cargo test -p server",
    "sort -u names.txt | head -n 3",
    "awk '{print $2}' data.txt | sort | uniq",
    "git log --format='%an' | sort | uniq -c | sort -rn | head",
    "ls -1 | wc -l",
    "du -sh target | cut -f1",
    "true && false || echo 'recovered'",
    "test -d build || mkdir build",
    "grep -q 'edition = \"2024\"' Cargo.toml && echo yes",
];

// Verifies: RUN-13
#[test]
fn shlex_corpus_argument_vectors_agree_with_python() {
    assert!(
        CORPUS.len() >= 200,
        "the corpus holds {} lines; it should hold at least 200",
        CORPUS.len()
    );
    let expected = shlex_split(CORPUS);
    assert_eq!(expected.len(), CORPUS.len());
    let mut differences = Vec::new();
    for (line, python) in CORPUS.iter().zip(&expected) {
        match compile(line, &AnyProgram) {
            Ok(plan) => {
                // With one command there is no operator for an argument to pass for.
                let joined = plan.commands().len() > 1;
                for command in plan.commands().into_iter().filter(|_| joined) {
                    if let Some(argument) = command
                        .arguments()
                        .iter()
                        .find(|argument| OPERATORS.contains(&argument.as_str()))
                    {
                        differences.push(format!(
                            "{line}\n    has an argument `{argument}` that reads as an operator; the corpus must not"
                        ));
                    }
                }
                let ours = flatten(&plan);
                if &ours != python {
                    differences.push(format!(
                        "{line}\n    python: {python:?}\n    ours:   {ours:?}"
                    ));
                }
            }
            Err(refusal) => differences.push(format!(
                "{line}\n    refused {} `{}`: {}",
                refusal.construct,
                refusal.excerpt(line),
                refusal.message
            )),
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {} lines differ from shlex.split:\n{}",
        differences.len(),
        CORPUS.len(),
        differences.join("\n")
    );
}
