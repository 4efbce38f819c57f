//! Tool search: an in-memory inverted index over tool names, titles, descriptions and
//! parameter names, ranked by BM25 (Robertson's formula, with the usual k1 = 1.2 and
//! b = 0.75). Each field counts its words with its own weight, so a word of a tool's name
//! outweighs the same word in its description. For the few thousand short documents a
//! listing holds, a sorted term table and one posting list per term are all it takes.

mod tokenize;

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::tool::listed::ListedTool;

const K1: f32 = 1.2;
const B: f32 = 0.75;

/// How much a word counts, by where it stands.
const NAME: f32 = 3.0;
const TITLE: f32 = 2.0;
const PARAMETER: f32 = 1.5;
const DESCRIPTION: f32 = 1.0;
/// A query word that is no word of the index counts, at this share, for the words it
/// begins (`calc` for `calculator`).
const PREFIX: f32 = 0.5;
const MAX_EXPANSIONS: usize = 16;

/// One tool as the index reads it.
pub struct Doc<'a> {
    pub name: &'a str,
    pub title: Option<&'a str>,
    pub description: &'a str,
    /// The input schema's JSON text: its `properties` give the parameter names.
    pub input_schema: &'a str,
}

impl<'a> Doc<'a> {
    /// The document of tool `tool` named `name`; empty for a tool only an app's view may
    /// see, so that no search finds it for a model.
    pub fn of(name: &'a str, tool: &'a ListedTool) -> Doc<'a> {
        match tool.app_only() {
            true => Doc {
                name: "",
                title: None,
                description: "",
                input_schema: "{}",
            },
            false => Doc {
                name,
                title: tool.title.as_deref(),
                description: tool.description.as_deref().unwrap_or_default(),
                input_schema: tool.input_schema.get(),
            },
        }
    }
}

/// The index, flat: term `i`'s postings are `docs[starts[i]..starts[i + 1]]` with their
/// `weights`, each twice the word's weighted count in the document (fields weigh in halves),
/// saturating: BM25 saturates long before.
#[derive(Default)]
pub struct Index {
    /// Every word, sorted, with where its postings start: binary search finds a word and
    /// the words it begins.
    terms: Vec<(Box<str>, u32)>,
    docs: Box<[u32]>,
    weights: Box<[u8]>,
    lengths: Box<[f32]>,
    average: f32,
}

impl Index {
    pub fn build<'a>(docs: impl IntoIterator<Item = Doc<'a>>) -> Index {
        let mut postings: HashMap<String, Vec<(u32, u8)>> = HashMap::new();
        let mut lengths = Vec::new();
        let mut counts: HashMap<String, f32> = HashMap::new();
        for (doc, tool) in docs.into_iter().enumerate() {
            let mut add = |text: &str, weight: f32| {
                tokenize::words(text, |word| *counts.entry(word).or_default() += weight)
            };
            add(tool.name, NAME);
            add(tool.title.unwrap_or(""), TITLE);
            add(tool.description, DESCRIPTION);
            for parameter in parameter_names(tool.input_schema) {
                add(&parameter, PARAMETER);
            }
            lengths.push(counts.values().sum());
            let doc = u32::try_from(doc).unwrap_or(u32::MAX);
            for (word, weight) in counts.drain() {
                let halves = (weight * 2.0).min(f32::from(u8::MAX)) as u8;
                postings.entry(word).or_default().push((doc, halves));
            }
        }
        let mut words: Vec<_> = postings.into_iter().collect();
        words.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let total = words.iter().map(|(_, list)| list.len()).sum();
        let (mut docs, mut weights) = (Vec::with_capacity(total), Vec::with_capacity(total));
        let mut terms = Vec::with_capacity(words.len());
        for (word, list) in words {
            terms.push((word.into_boxed_str(), docs.len() as u32));
            for (doc, weight) in list {
                docs.push(doc);
                weights.push(weight);
            }
        }
        let average = lengths.iter().sum::<f32>() / lengths.len().max(1) as f32;
        Index {
            terms,
            docs: docs.into_boxed_slice(),
            weights: weights.into_boxed_slice(),
            lengths: lengths.into_boxed_slice(),
            average: average.max(f32::MIN_POSITIVE),
        }
    }

    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// The documents that match `query` best, best first, at most `limit`; equal scores
    /// keep the documents' order.
    pub fn search(&self, query: &str, limit: usize) -> Vec<usize> {
        let mut words = Vec::new();
        tokenize::words(query, |word| {
            if !words.contains(&word) {
                words.push(word);
            }
        });
        if words.is_empty() || limit == 0 {
            return Vec::new();
        }
        let mut scores = vec![0f32; self.len()];
        for word in &words {
            match self
                .terms
                .binary_search_by(|(term, _)| term.as_ref().cmp(word))
            {
                Ok(found) => self.score(found, 1.0, &mut scores),
                Err(from) if word.len() >= 3 => {
                    let begun = self.terms[from..].iter().take(MAX_EXPANSIONS);
                    let begun = begun.take_while(|(term, _)| term.starts_with(word.as_str()));
                    for offset in 0..begun.count() {
                        self.score(from + offset, PREFIX, &mut scores);
                    }
                }
                Err(_) => {}
            }
        }
        let mut hits: Vec<usize> = (0..scores.len()).filter(|&d| scores[d] > 0.0).collect();
        let by_score = |a: &usize, b: &usize| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b));
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, by_score);
            hits.truncate(limit);
        }
        hits.sort_unstable_by(by_score);
        hits
    }

    /// Adds term `at`'s BM25 contribution, times `share`, to each document it occurs in.
    fn score(&self, at: usize, share: f32, scores: &mut [f32]) {
        let start = self.terms[at].1 as usize;
        let end = self
            .terms
            .get(at + 1)
            .map_or(self.docs.len(), |t| t.1 as usize);
        let n = self.len() as f32;
        let df = (end - start) as f32;
        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        for (doc, halves) in self.docs[start..end].iter().zip(&self.weights[start..end]) {
            let doc = *doc as usize;
            let length = self.lengths[doc] / self.average;
            let tf = f32::from(*halves) / 2.0;
            let norm = K1 * (1.0 - B + B * length);
            scores[doc] += share * idf * tf * (K1 + 1.0) / (tf + norm);
        }
    }

    /// The bytes the index holds, roughly: its words, postings and lengths.
    pub fn heap_bytes(&self) -> usize {
        let entry = std::mem::size_of::<(Box<str>, u32)>();
        let words: usize = self.terms.iter().map(|(word, _)| entry + word.len()).sum();
        words + self.docs.len() * 5 + self.lengths.len() * 4
    }
}

/// The names of a schema's top-level `properties`; none when it has none or is not JSON.
fn parameter_names(schema: &str) -> Vec<String> {
    #[derive(Deserialize)]
    struct Properties {
        #[serde(default)]
        properties: Option<BTreeMap<String, IgnoredAny>>,
    }
    let properties = serde_json::from_str::<Properties>(schema).ok();
    let names = properties.and_then(|p| p.properties).unwrap_or_default();
    names.into_keys().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc<'a>(name: &'a str, description: &'a str, input_schema: &'a str) -> Doc<'a> {
        Doc {
            name,
            title: None,
            description,
            input_schema,
        }
    }

    fn index() -> Index {
        Index::build([
            doc(
                "fs_read_file",
                "Read the contents of a file",
                r#"{"properties":{"path":{}}}"#,
            ),
            doc(
                "fs_write_file",
                "Write text to a file",
                r#"{"properties":{"path":{},"content":{}}}"#,
            ),
            doc(
                "github_create_issue",
                "Open an issue in a repository",
                r#"{"properties":{"owner":{},"repo":{},"title":{}}}"#,
            ),
            doc("weather_forecast", "Forecast for a city", "not json"),
            doc("math_calculator", "Evaluates arithmetic", "{}"),
        ])
    }

    #[test]
    fn ranks_names_descriptions_and_parameters() {
        let index = index();
        assert_eq!(index.search("read a file", 5)[0], 0);
        assert_eq!(index.search("create github issue", 5), [2]);
        // A parameter name outweighs a word of a description.
        assert_eq!(index.search("content", 5), [1, 0]);
        assert_eq!(index.search("forecasts for Paris", 5), [3]);
        assert_eq!(index.search("files", 1).len(), 1, "the limit holds");
    }

    #[test]
    fn a_word_matches_the_words_it_begins() {
        assert_eq!(index().search("calc", 5), [4]);
    }

    #[test]
    fn nothing_matches_nothing() {
        let index = index();
        assert!(index.search("", 5).is_empty());
        assert!(index.search("the of a", 5).is_empty());
        assert!(index.search("zebra", 5).is_empty());
        assert!(Index::build([]).search("file", 5).is_empty());
    }
}
