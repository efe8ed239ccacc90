//! Prices as data: `pricing.json` beside this file (source and date inside), embedded at
//! build time so that pricing never needs the network; `--pricing FILE` reads another file
//! of the same shape.

use crate::error::{Error, Result};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;

/// The table shipped with sessiondb.
pub const EMBEDDED: &str = include_str!("pricing.json");

/// A model's prices, USD per million tokens.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Rates {
    /// Uncached input.
    pub input: f64,
    /// Output.
    pub output: f64,
    /// Cache writes that live 5 minutes.
    pub cache_write_5m: f64,
    /// Cache writes that live 1 hour.
    pub cache_write_1h: f64,
    /// Cache reads.
    pub cache_read: f64,
}

/// The long-context tier: a request whose input (uncached, cache writes and cache reads
/// together) exceeds `above_input_tokens` is priced wholly at these rates, output included
/// (Anthropic's rule for the 1M-token context window).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LongContext {
    /// The threshold, in input tokens of one request.
    pub above_input_tokens: i64,
    /// The rates of such a request.
    #[serde(flatten)]
    pub rates: Rates,
}

#[derive(Debug, Clone, Deserialize)]
struct Entry {
    names: Vec<String>,
    #[serde(flatten)]
    rates: Rates,
    long_context: Option<LongContext>,
}

#[derive(Debug, Clone, Deserialize)]
struct File {
    source: String,
    date: String,
    web_search_per_request: f64,
    models: Vec<Entry>,
}

/// A model's entry in the table.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelPrice {
    /// The ordinary rates.
    pub rates: Rates,
    /// The long-context tier, for models that have one.
    pub long_context: Option<LongContext>,
}

/// The token counts of one response, as pricing needs them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Uncached input.
    pub input: i64,
    /// Output.
    pub output: i64,
    /// Cache writes, both lifetimes.
    pub cache_creation: i64,
    /// The 1-hour part of `cache_creation`.
    pub cache_creation_1h: i64,
    /// Cache reads.
    pub cache_read: i64,
    /// Web searches.
    pub web_search: i64,
}

/// A loaded pricing table.
#[derive(Debug, Clone)]
pub struct Pricing {
    /// Where the prices come from.
    pub source: String,
    /// When they were taken.
    pub date: String,
    /// USD per web search request.
    pub web_search_per_request: f64,
    models: HashMap<String, ModelPrice>,
}

impl Pricing {
    /// The embedded table.
    pub fn embedded() -> Pricing {
        Pricing::parse(EMBEDDED, "the embedded pricing table").expect("the shipped table parses")
    }

    /// Reads a table from `path` (the shape of the embedded one).
    ///
    /// # Errors
    /// Fails when the file cannot be read or is not such a table.
    pub fn read(path: &Path) -> Result<Pricing> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Pricing::parse(&text, &path.display().to_string())
    }

    fn parse(text: &str, what: &str) -> Result<Pricing> {
        let file: File = serde_json::from_str(text)
            .map_err(|e| Error::Invalid(format!("{what}: line {}: {e}", e.line())))?;
        let mut models = HashMap::new();
        for entry in file.models {
            for name in entry.names {
                let price = ModelPrice {
                    rates: entry.rates.clone(),
                    long_context: entry.long_context.clone(),
                };
                if models.insert(name.clone(), price).is_some() {
                    return Err(Error::Invalid(format!(
                        "{what}: model {name} is priced twice"
                    )));
                }
            }
        }
        Ok(Pricing {
            source: file.source,
            date: file.date,
            web_search_per_request: file.web_search_per_request,
            models,
        })
    }

    /// The entry for `model`, if the table prices it.
    pub fn model(&self, model: &str) -> Option<&ModelPrice> {
        self.models.get(model)
    }

    /// What one response cost; `None` when the table does not price its model.
    pub fn cost(&self, model: &str, t: &Tokens) -> Option<f64> {
        let price = self.model(model)?;
        let input = t.input + t.cache_creation + t.cache_read;
        let rates = match &price.long_context {
            Some(long) if input > long.above_input_tokens => &long.rates,
            _ => &price.rates,
        };
        let five_minute = t.cache_creation - t.cache_creation_1h;
        let per_million = t.input as f64 * rates.input
            + t.output as f64 * rates.output
            + five_minute as f64 * rates.cache_write_5m
            + t.cache_creation_1h as f64 * rates.cache_write_1h
            + t.cache_read as f64 * rates.cache_read;
        Some(per_million / 1e6 + t.web_search as f64 * self.web_search_per_request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_token_kind_has_its_rate() {
        let p = Pricing::embedded();
        assert!(p.date.len() == 10 && !p.source.is_empty());
        let m = "claude-opus-4-5-20251101";
        let one = |t: Tokens| p.cost(m, &t).expect("priced");
        let million = 1_000_000;
        assert_eq!(
            one(Tokens {
                input: million,
                ..Default::default()
            }),
            5.0
        );
        assert_eq!(
            one(Tokens {
                output: million,
                ..Default::default()
            }),
            25.0
        );
        assert_eq!(
            one(Tokens {
                cache_creation: million,
                ..Default::default()
            }),
            6.25
        );
        let hour = Tokens {
            cache_creation: million,
            cache_creation_1h: million,
            ..Default::default()
        };
        assert_eq!(one(hour), 10.0);
        assert_eq!(
            one(Tokens {
                cache_read: million,
                ..Default::default()
            }),
            0.5
        );
        assert_eq!(
            one(Tokens {
                web_search: 3,
                ..Default::default()
            }),
            0.03
        );
        assert_eq!(p.cost("claude-unknown-9", &Tokens::default()), None);
    }

    #[test]
    fn the_long_context_tier_prices_the_whole_request() {
        let p = Pricing::embedded();
        let m = "claude-sonnet-4-20250514";
        let at = |input, read| {
            p.cost(
                m,
                &Tokens {
                    input,
                    output: 1000,
                    cache_read: read,
                    ..Default::default()
                },
            )
            .expect("priced")
        };
        // 200,000 input tokens is still the ordinary tier.
        assert!((at(1000, 199_000) - (0.003 + 0.015 + 0.0597)).abs() < 1e-9);
        // One more: every token of the request at the long-context rates, output too.
        assert!((at(1000, 199_001) - (0.006 + 0.0225 + 199_001.0 * 0.6 / 1e6)).abs() < 1e-9);
    }

    #[test]
    fn a_bad_table_names_its_file_and_line() {
        let err = Pricing::parse("{\n\"source\": 1}", "prices.json").unwrap_err();
        assert!(err.to_string().contains("prices.json: line 2"), "{err}");
    }
}
