//! Positions as the planner states them (1-based line and character, as `read_file` and `search`
//! report them) and as a language server reads them (0-based line, 0-based column in the unit the
//! two sides agreed at `initialize`: UTF-16 code units unless the server chose UTF-32).
//!
//! Lines are split the way `read_file` splits them (`\n`, with a `\r` before it dropped), so line
//! 12 here is line 12 of a read. A character is one Unicode scalar value, so a tab or an emoji is
//! one character whatever its width.

/// The unit a server counts columns in, as negotiated at `initialize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf16,
    Utf32,
}

impl Encoding {
    /// The encoding a server's `initialize` result names; LSP's default when it names none.
    pub fn from_capability(name: Option<&str>) -> Encoding {
        match name {
            Some("utf-32") => Encoding::Utf32,
            _ => Encoding::Utf16,
        }
    }
}

/// A 0-based position in a server's units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerPosition {
    pub line: u32,
    pub character: u32,
}

/// Why a planner's position names no place in the text: the file changed under it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stale {
    /// The file has fewer lines than that.
    NoSuchLine { lines: usize },
    /// The line is shorter than that.
    PastLineEnd { length: usize },
}

/// The text of 0-based line `index`, without its line ending.
fn line_text(text: &str, index: usize) -> Option<&str> {
    text.split('\n')
        .nth(index)
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
}

fn line_count(text: &str) -> usize {
    text.lines().count()
}

/// Converts a planner's 1-based `line` and `character` into the server's position. Character
/// `n + 1` on a line of `n` characters is its end, and allowed; anything past that, or a line the
/// text does not have, is stale.
pub fn to_server(
    text: &str,
    line: u64,
    character: u64,
    encoding: Encoding,
) -> Result<ServerPosition, Stale> {
    let lines = line_count(text);
    let index = usize::try_from(line.max(1) - 1).unwrap_or(usize::MAX);
    let Some(content) = line_text(text, index).filter(|_| index < lines.max(1)) else {
        return Err(Stale::NoSuchLine { lines });
    };
    let length = content.chars().count();
    let before = usize::try_from(character.max(1) - 1).unwrap_or(usize::MAX);
    if before > length {
        return Err(Stale::PastLineEnd { length });
    }
    let column = match encoding {
        Encoding::Utf32 => before,
        Encoding::Utf16 => content.chars().take(before).map(char::len_utf16).sum(),
    };
    Ok(ServerPosition {
        line: u32::try_from(index).unwrap_or(u32::MAX),
        character: u32::try_from(column).unwrap_or(u32::MAX),
    })
}

/// Converts a server's position back into a 1-based line and character. `text` is the file the
/// position is in, when it could be read; without it a UTF-16 column is taken as it is, which is
/// exact on every line without characters outside the Basic Multilingual Plane.
pub fn from_server(text: Option<&str>, position: ServerPosition, encoding: Encoding) -> (u64, u64) {
    let line = u64::from(position.line) + 1;
    let units = position.character as usize;
    let characters = match (
        encoding,
        text.and_then(|t| line_text(t, position.line as usize)),
    ) {
        (Encoding::Utf32, _) | (Encoding::Utf16, None) => units,
        (Encoding::Utf16, Some(content)) => {
            let mut seen = 0;
            let mut count = 0;
            for c in content.chars() {
                if seen >= units {
                    break;
                }
                seen += c.len_utf16();
                count += 1;
            }
            // A column past the line's end (a server may point one past it) keeps its excess.
            count + units.saturating_sub(seen)
        }
    };
    (line, characters as u64 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "fn main() {\r\n\tlet café = \"😀x\";\n}\n";

    // Verifies: LSP-2
    #[test]
    fn a_planners_position_becomes_the_servers_units() {
        let at = |line, character, encoding| to_server(TEXT, line, character, encoding);
        assert_eq!(
            at(1, 4, Encoding::Utf16),
            Ok(ServerPosition {
                line: 0,
                character: 3
            })
        );
        // The emoji is two UTF-16 units and one UTF-32 unit: `x` after it differs.
        let x = 1 + "\tlet café = \"😀".chars().count() as u64;
        assert_eq!(
            at(2, x, Encoding::Utf16),
            Ok(ServerPosition {
                line: 1,
                character: 15
            })
        );
        assert_eq!(
            at(2, x, Encoding::Utf32),
            Ok(ServerPosition {
                line: 1,
                character: 14
            })
        );
        // The end of a line is a place; one past it is not; nor is a line the file lacks.
        assert_eq!(
            at(3, 2, Encoding::Utf16),
            Ok(ServerPosition {
                line: 2,
                character: 1
            })
        );
        assert_eq!(
            at(3, 3, Encoding::Utf16),
            Err(Stale::PastLineEnd { length: 1 })
        );
        assert_eq!(
            at(4, 1, Encoding::Utf16),
            Err(Stale::NoSuchLine { lines: 3 })
        );
        assert_eq!(
            at(400, 1, Encoding::Utf32),
            Err(Stale::NoSuchLine { lines: 3 })
        );
    }

    // Verifies: LSP-2
    #[test]
    fn a_servers_position_comes_back_as_a_read_would_count_it() {
        let p = |line, character| ServerPosition { line, character };
        assert_eq!(from_server(Some(TEXT), p(1, 16), Encoding::Utf16), (2, 16));
        assert_eq!(from_server(Some(TEXT), p(1, 15), Encoding::Utf32), (2, 16));
        assert_eq!(from_server(None, p(1, 16), Encoding::Utf16), (2, 17));
        assert_eq!(from_server(Some(TEXT), p(0, 0), Encoding::Utf16), (1, 1));
        // Round trip on every character of the line with the emoji.
        for character in 1..=15 {
            let there = to_server(TEXT, 2, character, Encoding::Utf16).expect("in range");
            assert_eq!(
                from_server(Some(TEXT), there, Encoding::Utf16),
                (2, character)
            );
        }
    }
}
