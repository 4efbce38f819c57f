//! `${VAR}` and `${VAR:-default}` in config values, as Claude Code and Cursor expand them.
//!
//! `${VAR}` is the variable's value, empty if it is set but empty; `${VAR:-default}` is the
//! default when the variable is unset or empty (POSIX `:-`). The default is the text up to
//! the first `}`, taken as written. Anything else, `$VAR` or `${not a name}`, stays as it is.

/// A variable that a value needs and the environment does not have.
#[derive(Debug, Clone, PartialEq)]
pub struct Unset(pub String);

/// Expands `value`; a `${VAR}` without default whose variable `lookup` does not know is an
/// error naming it.
pub fn expand(value: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, Unset> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let body = &rest[start + 2..];
        let Some(reference) = Reference::parse(body) else {
            out.push_str("${");
            rest = body;
            continue;
        };
        match (lookup(reference.name), reference.default) {
            (Some(value), Some(default)) if value.is_empty() => out.push_str(default),
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => return Err(Unset(reference.name.to_owned())),
        }
        rest = &body[reference.len..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Expands `value` where an unset variable without default is empty, as `${NAME}` in
/// headers always was for `expandEnvHeaders`.
pub fn expand_or_empty(value: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let or_empty = |name: &str| Some(lookup(name).unwrap_or_default());
    expand(value, &or_empty).unwrap_or_default()
}

/// What follows a `${`: a name, maybe a `:-default`, then `}`.
struct Reference<'a> {
    name: &'a str,
    default: Option<&'a str>,
    /// Bytes from after `${` to after `}`.
    len: usize,
}

impl<'a> Reference<'a> {
    fn parse(body: &'a str) -> Option<Reference<'a>> {
        let end = body.find('}')?;
        let inside = &body[..end];
        let (name, default) = match inside.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inside, None),
        };
        let mut chars = name.chars();
        let starts_well = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        if !starts_well || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        Some(Reference {
            name,
            default,
            len: end + 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/ada".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    fn ok(value: &str) -> String {
        expand(value, &env).expect("expands")
    }

    #[test]
    fn variables_and_defaults() {
        assert_eq!(ok("${HOME}/bin:${HOME}"), "/home/ada/bin:/home/ada");
        assert_eq!(ok("${NOPE:-fallback}"), "fallback");
        assert_eq!(ok("${HOME:-fallback}"), "/home/ada");
        assert_eq!(
            ok("${EMPTY:-fallback}"),
            "fallback",
            "`:-` also covers empty"
        );
        assert_eq!(ok("[${EMPTY}]"), "[]", "set but empty is no error");
        assert_eq!(ok("${NOPE:-}"), "");
        assert_eq!(
            ok("${NOPE:-a:-b}"),
            "a:-b",
            "the default is taken as written"
        );
    }

    #[test]
    fn an_unset_variable_without_default_names_it() {
        assert_eq!(expand("Bearer ${TOKEN}", &env), Err(Unset("TOKEN".into())));
    }

    #[test]
    fn what_is_not_a_reference_stays() {
        for text in [
            "$HOME", "${", "${HOME", "${1X}", "${a b}", "${}", "cost: $5", "${-x}",
        ] {
            assert_eq!(ok(text), text);
        }
        assert_eq!(ok("${ ${HOME}"), "${ /home/ada");
        assert_eq!(ok("é${HOME}ü"), "é/home/adaü");
    }

    #[test]
    fn or_empty_never_fails() {
        assert_eq!(expand_or_empty("a${TOKEN}b${HOME}", &env), "ab/home/ada");
    }
}
