//! Tool names every LLM provider accepts: at most 64 characters of `[a-zA-Z0-9_-]`, unique
//! within one listing (a `loadMcp` source, a store view).
//!
//! A tool is `sanitize(server) + "_" + sanitize(tool)` when that fits and no other tool of
//! the listing gets the same name. Otherwise it is shortened (the server part to at most
//! 20 characters when both do not fit, the tool part to what is left) and `_` plus 8 hex
//! digits of a hash of the original server and tool names is appended. The hash is
//! FNV-1a, fixed here, so a name is the same on every load and in every process; which
//! tools collide depends only on the set of names, never on their order.

use std::collections::{HashMap, HashSet};

use crate::config::{push_sanitized, sanitize};

/// The longest function name OpenAI, Anthropic and Gemini accept.
pub const MAX_LEN: usize = 64;
/// What a shortened name spends on `_` and the hash.
const HASH_LEN: usize = 8;
/// A server part is cut to this when the server and tool parts together do not fit.
const SERVER_KEEP: usize = 20;

/// One name per `(server, tool)` pair, in order: the pairs are as their listing names
/// them (a service's name in a store view, the tool's name as its server lists it).
pub fn assign<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let pairs: Vec<_> = pairs.into_iter().collect();
    let plain: Vec<String> = pairs
        .iter()
        .map(|(server, tool)| {
            let mut name = String::with_capacity(server.len() + 1 + tool.len());
            push_sanitized(&mut name, server);
            name.push('_');
            push_sanitized(&mut name, tool);
            name
        })
        .collect();
    let shortened = shortened_where_needed(&pairs, &plain);
    // The plain names are moved, not copied: a listing may hold a hundred thousand tools,
    // and each copy would leave a hole in the heap next to the names that stay.
    plain
        .into_iter()
        .zip(shortened)
        .map(|(name, shortened)| shortened.unwrap_or(name))
        .collect()
}

/// For each pair, the shortened name it gets when its plain name is too long or not unique.
fn shortened_where_needed(pairs: &[(&str, &str)], plain: &[String]) -> Vec<Option<String>> {
    let mut count: HashMap<&str, usize> = HashMap::with_capacity(plain.len());
    for name in plain {
        *count.entry(name).or_default() += 1;
    }
    let keeps = |name: &str| name.len() <= MAX_LEN && count.get(name) == Some(&1);
    let mut given: HashSet<String> = HashSet::new();
    pairs
        .iter()
        .zip(plain)
        .map(|(&(server, tool), name)| {
            if keeps(name) {
                return None;
            }
            // A shortened name that another tool already has (by its own plain name, or by
            // a hash collision) is hashed again with a salt: unlikely, but never a duplicate.
            let shortened = (0u32..)
                .map(|salt| shortened(server, tool, salt))
                .find(|candidate| !keeps(candidate) && !given.contains(candidate))
                .expect("an unbounded range");
            given.insert(shortened.clone());
            Some(shortened)
        })
        .collect()
}

fn shortened(server: &str, tool: &str, salt: u32) -> String {
    let (server_part, tool_part) = (sanitize(server), sanitize(tool));
    let room = MAX_LEN - HASH_LEN - 2;
    let server_len = server_part
        .len()
        .min(SERVER_KEEP.max(room.saturating_sub(tool_part.len())));
    let tool_len = tool_part.len().min(room - server_len);
    // Sanitized text is ASCII, so byte lengths are character counts and cuts are safe.
    let mut hash = fnv1a(server.as_bytes());
    hash = fnv1a_more(hash, &[0]);
    hash = fnv1a_more(hash, tool.as_bytes());
    if salt > 0 {
        hash = fnv1a_more(hash, &salt.to_le_bytes());
    }
    format!(
        "{}_{}_{:08x}",
        &server_part[..server_len],
        &tool_part[..tool_len],
        (hash ^ (hash >> 32)) as u32
    )
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_more(FNV_OFFSET, bytes)
}

fn fnv1a_more(mut hash: u64, bytes: &[u8]) -> u64 {
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        name.len() <= MAX_LEN
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn short_unique_names_are_server_underscore_tool() {
        let names = assign([("my.srv", "do it"), ("a-b_c", "x/y:z"), ("a-b_c", "ünï")]);
        assert_eq!(names, ["my_srv_do_it", "a-b_c_x_y_z", "a-b_c__n_"]);
    }

    #[test]
    fn long_names_fit_keep_both_parts_and_are_stable() {
        let server = "s".repeat(70);
        let tool = "create_pull_request_review_comment_reply_with_attachments";
        let names = assign([(server.as_str(), tool), ("x", "y")]);
        let long = &names[0];
        assert!(valid(long), "{long}");
        assert_eq!(long.len(), MAX_LEN);
        assert!(long.starts_with(&format!("{}_create_pull", "s".repeat(SERVER_KEEP))));
        assert_eq!(names[1], "x_y");
        // Same input, same name: nothing depends on the process or the run.
        assert_eq!(assign([(server.as_str(), tool)])[0], *long);
        // Pinned: a change of hash would rename every shortened tool of every user.
        assert_eq!(shortened("docs", "search", 0), "docs_search_bb3f41e3");
    }

    #[test]
    fn a_long_tool_of_a_short_server_keeps_the_whole_server() {
        let tool = "t".repeat(100);
        let name = &assign([("github", tool.as_str())])[0];
        assert!(valid(name) && name.starts_with("github_ttt"), "{name}");
    }

    #[test]
    fn colliding_names_all_get_distinct_hashed_names_whatever_the_order() {
        let forward = assign([("x", "a.b"), ("x", "a_b"), ("x", "c")]);
        let backward = assign([("x", "c"), ("x", "a_b"), ("x", "a.b")]);
        assert_eq!(forward[2], "x_c");
        assert!(forward[0].starts_with("x_a_b_") && forward[1].starts_with("x_a_b_"));
        assert_ne!(forward[0], forward[1]);
        assert_eq!((&forward[0], &forward[1]), (&backward[2], &backward[1]));
        // Across servers too: "a_b"'s "c" and "a"'s "b_c".
        let across = assign([("a_b", "c"), ("a", "b_c")]);
        assert_ne!(across[0], across[1]);
        assert!(across.iter().all(|n| valid(n)));
    }

    #[test]
    fn a_shortened_name_never_takes_a_name_already_given() {
        let first = assign([("x", "a.b"), ("x", "a_b")]);
        // A tool whose plain name is exactly the first shortened name keeps it; the
        // shortened one is salted to something else.
        let names = assign([("x", "a.b"), ("x", "a_b"), ("x", &first[0]["x_".len()..])]);
        assert_eq!(names[2], first[0]);
        let unique: HashSet<_> = names.iter().collect();
        assert_eq!(unique.len(), 3, "{names:?}");
    }

    #[test]
    fn a_server_listing_one_name_twice_still_gets_two_names() {
        let names = assign([("x", "dup"), ("x", "dup")]);
        assert_ne!(names[0], names[1]);
        assert!(names.iter().all(|n| valid(n)));
    }
}
