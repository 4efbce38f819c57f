//! Words of tool names, titles, descriptions and queries, as the index compares them:
//! split on anything but letters and digits and at case changes (`getFileInfo`,
//! `HTTPServer`), lowercased, common English words dropped, and plural and verb endings
//! taken off, so that "files", "listing" and "listed" meet "file" and "list".

/// Words too common to tell tools apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "get", "has",
    "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "so", "that",
    "the", "this", "to", "tool", "use", "using", "via", "was", "what", "when", "which", "with",
    "you", "your",
];

/// Calls `each` with every word of `text`, in order.
pub fn words(text: &str, mut each: impl FnMut(String)) {
    for piece in text.split(|c: char| !c.is_alphanumeric()) {
        split_case(piece, |word| {
            let word = word.to_lowercase();
            if !STOP_WORDS.contains(&word.as_str()) {
                each(stem(word));
            }
        });
    }
}

/// Splits `getFileInfo` into get / File / Info and `HTTPServer` into HTTP / Server; digits
/// stay with the letters before them (`v2`, `utf8`).
fn split_case(piece: &str, mut each: impl FnMut(&str)) {
    let chars: Vec<(usize, char)> = piece.char_indices().collect();
    let mut start = 0;
    for i in 1..chars.len() {
        let (at, c) = chars[i];
        let prev = chars[i - 1].1;
        let next_lower = chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
        let boundary = c.is_uppercase()
            && (prev.is_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_uppercase() && next_lower));
        if boundary {
            each(&piece[start..at]);
            start = at;
        }
    }
    if start < piece.len() {
        each(&piece[start..]);
    }
}

/// A light English suffix stripper: enough to join the forms tool texts use, never
/// shortening a word below three letters.
fn stem(mut word: String) -> String {
    let len = word.chars().count();
    if len <= 3 || !word.is_ascii() {
        return word;
    }
    if let Some(base) = word.strip_suffix("ies") {
        word = format!("{base}y");
    } else if let Some(base) = word.strip_suffix("ing").filter(|b| b.len() >= 3) {
        word = base.to_owned();
    } else if let Some(base) = word.strip_suffix("ed").filter(|b| b.len() >= 3) {
        word = base.to_owned();
    } else if word.ends_with("sses")
        || word.ends_with("shes")
        || word.ends_with("ches")
        || word.ends_with("xes")
    {
        word.truncate(word.len() - 2);
    } else if word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with("us")
        && !word.ends_with("is")
    {
        word.pop();
    }
    // "creat(e)" and "creat(ed)" meet; so do "writ(e)" and "writ(ing)".
    if word.len() > 3 && word.ends_with('e') {
        word.pop();
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        words(text, |w| out.push(w));
        out
    }

    #[test]
    fn splits_names_on_separators_and_case() {
        assert_eq!(
            all("github_create-issue.v2"),
            ["github", "creat", "issu", "v2"]
        );
        assert_eq!(all("getFileInfo"), ["fil", "info"]);
        assert_eq!(
            all("HTTPServer utf8Decode"),
            ["http", "server", "utf8", "decod"]
        );
    }

    #[test]
    fn forms_of_a_word_meet() {
        assert_eq!(all("files"), all("file"));
        assert_eq!(all("listing listed lists"), all("list list list"));
        assert_eq!(all("queries"), all("query"));
        assert_eq!(all("creates"), all("created"));
        assert_eq!(all("the issues of a repository"), ["issu", "repository"]);
    }
}
