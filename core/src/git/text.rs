//! How names, dates and messages are spelled in an answer, as git spells them.

use super::Signature;

/// A path as git prints it with `core.quotePath` at its default: unchanged when every byte is
/// printable ASCII other than `"` and `\`, otherwise in double quotes with C escapes and each
/// other byte in octal.
pub fn quote_path(path: &[u8]) -> String {
    let needs = path
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\' || b >= 0x7f);
    if !needs {
        return String::from_utf8_lossy(path).into_owned();
    }
    let mut out = String::with_capacity(path.len() + 2);
    out.push('"');
    for &b in path {
        match b {
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            0x0b => out.push_str("\\v"),
            0x0c => out.push_str("\\f"),
            b'\r' => out.push_str("\\r"),
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b if !(0x20..0x7f).contains(&b) => out.push_str(&format!("\\{b:03o}")),
            b => out.push(char::from(b)),
        }
    }
    out.push('"');
    out
}

/// The day a signature was made, in the signer's own zone, as `--date=short` prints it.
pub fn short_date(s: &Signature) -> String {
    s.time.format_or_unix(gix::date::time::format::SHORT)
}

/// The date as git's default format prints it: `Thu Apr 7 15:13:13 2005 -0700`.
pub fn default_date(s: &Signature) -> String {
    s.time.format_or_unix(gix::date::time::format::DEFAULT)
}

/// `Name <email>`.
pub fn ident(s: &Signature) -> String {
    format!(
        "{} <{}>",
        String::from_utf8_lossy(&s.name),
        String::from_utf8_lossy(&s.email)
    )
}

/// A message's lines with leading blank lines dropped and trailing ones too.
fn trimmed_lines(message: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = message.split(|b| *b == b'\n').collect();
    let blank = |l: &&[u8]| l.iter().all(u8::is_ascii_whitespace);
    while lines.first().is_some_and(blank) {
        lines.remove(0);
    }
    while lines.last().is_some_and(blank) {
        lines.pop();
    }
    lines
}

fn trim_end(line: &[u8]) -> &[u8] {
    let end = line
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    &line[..end]
}

/// The subject as `%s` prints it: the first paragraph, its lines joined by single spaces.
pub fn subject(message: &[u8]) -> String {
    let lines = trimmed_lines(message);
    let paragraph: Vec<String> = lines
        .iter()
        .take_while(|l| !l.iter().all(u8::is_ascii_whitespace))
        .map(|l| {
            String::from_utf8_lossy(trim_end(l))
                .trim_start()
                .to_string()
        })
        .collect();
    paragraph.join(" ")
}

/// The rest of the message after its subject paragraph, blank lines around it dropped.
pub fn body(message: &[u8]) -> Vec<String> {
    let lines = trimmed_lines(message);
    let mut rest = lines
        .iter()
        .skip_while(|l| !l.iter().all(u8::is_ascii_whitespace))
        .map(|l| String::from_utf8_lossy(trim_end(l)).into_owned())
        .collect::<Vec<_>>();
    while rest.first().is_some_and(|l| l.is_empty()) {
        rest.remove(0);
    }
    rest
}

/// The whole message as `git show` prints it: every line indented by four spaces, blank lines
/// at either end dropped.
pub fn indented_message(message: &[u8]) -> Vec<String> {
    trimmed_lines(message)
        .iter()
        .map(|l| format!("    {}", expand_tabs(&String::from_utf8_lossy(trim_end(l)))))
        .collect()
}

/// A message line with each tab replaced by the spaces that reach the next multiple of eight
/// columns, counted from the line's start, as `git show` prints a message (`--expand-tabs`, on
/// by default for its format). Each character is one column (GIT-11).
fn expand_tabs(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut column = 0;
    for c in line.chars() {
        if c == '\t' {
            let pad = 8 - column % 8;
            out.extend(std::iter::repeat_n(' ', pad));
            column += pad;
        } else {
            out.push(c);
            column += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: GIT-3
    #[test]
    fn paths_are_quoted_as_git_quotes_them() {
        assert_eq!(quote_path(b"src/a.rs"), "src/a.rs");
        assert_eq!(quote_path(b"a\tb"), "\"a\\tb\"");
        assert_eq!(quote_path("é".as_bytes()), "\"\\303\\251\"");
        assert_eq!(quote_path(b"q\"\\"), "\"q\\\"\\\\\"");
        assert_eq!(quote_path(b"\xff.bin"), "\"\\377.bin\"");
    }

    // Verifies: GIT-1, GIT-11
    #[test]
    fn a_tab_in_a_shown_message_reaches_the_next_eighth_column_as_git_prints_it() {
        assert_eq!(
            indented_message(b"Merge\n\n#\tcore/src/a.rs\nab\tc\tdone\n\t\tx\n"),
            [
                "    Merge",
                "    ",
                "    #       core/src/a.rs",
                "    ab      c       done",
                "                    x",
            ]
        );
    }

    // Verifies: GIT-1
    #[test]
    fn a_subject_is_the_first_paragraph_joined() {
        assert_eq!(subject(b"\n\nfirst\nsecond  \n\nbody\n"), "first second");
        assert_eq!(
            body(b"first\n\n\nbody one\n\nbody two\n\n"),
            vec!["body one", "", "body two"]
        );
    }
}
