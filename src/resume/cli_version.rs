//! The Claude Code version a resume follows (`resume --cli-version V`, issue 25).
//!
//! sessiondb was checked against CLI 2.1.332 and 2.1.336 (`tools/difftest/follow.sh`).
//! Where their resume rules differ ([`Rule`]), the rule functions take the version as a
//! plain value and ask [`CliVersion::follows`]. A version before a rule's
//! [`Rule::since`] is resumed as 2.1.332 resumes; any later one, unchecked newer versions
//! included, as 2.1.336 does. Versions older than 2.1.332 are not told apart from it.
//! The default is [`CliVersion::NEWEST_CHECKED`].

use std::fmt;
use std::str::FromStr;

/// A CLI version `X.Y.Z`, ordered as numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CliVersion {
    major: u32,
    minor: u32,
    patch: u32,
}

impl CliVersion {
    /// The oldest version checked against the real CLI: every oracle pack was recorded
    /// with it.
    pub const OLDEST_CHECKED: CliVersion = CliVersion::new(2, 1, 332);
    /// The newest version checked against the real CLI, and the default.
    pub const NEWEST_CHECKED: CliVersion = CliVersion::new(2, 1, 336);

    /// `major.minor.patch`.
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        CliVersion {
            major,
            minor,
            patch,
        }
    }

    /// Whether a resume as this version follows `rule` (the version is `rule.since()` or
    /// later).
    pub fn follows(self, rule: Rule) -> bool {
        self >= rule.since()
    }
}

impl Default for CliVersion {
    /// [`CliVersion::NEWEST_CHECKED`].
    fn default() -> Self {
        CliVersion::NEWEST_CHECKED
    }
}

impl fmt::Display for CliVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Why a string is not a [`CliVersion`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadCliVersion(String);

impl fmt::Display for BadCliVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not a Claude Code version: expected X.Y.Z, three whole numbers (e.g. {})",
            self.0,
            CliVersion::NEWEST_CHECKED
        )
    }
}

impl std::error::Error for BadCliVersion {}

impl FromStr for CliVersion {
    type Err = BadCliVersion;

    /// `X.Y.Z`: three runs of ASCII digits separated by dots, each at most `u32::MAX`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadCliVersion(s.to_owned());
        let number = |p: &str| -> Result<u32, BadCliVersion> {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            p.parse().map_err(|_| bad())
        };
        let mut parts = s.split('.');
        let (Some(a), Some(b), Some(c), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        Ok(CliVersion::new(number(a)?, number(b)?, number(c)?))
    }
}

/// A resume rule that differs between the checked versions (2.1.332 has none of them,
/// 2.1.336 all; 2.1.333–2.1.335 were not checked and are taken as 2.1.336).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// The attachment kinds 2.1.332 does not know (`auto_mode_rules`, `plugin_rules`,
    /// `projects_instructions`, `routine_fire`, `attachment_answer`): rendered from the
    /// payload, answers applied ([`super::render_later`], [`super::answers`]). Without it
    /// they are kinds the CLI does not know: a stored `rendered` is sent as stored (with
    /// its stored `renderedRole`, else in the user turn), nothing without one.
    LaterKinds,
    /// A record's `textRewritten` is read ([`super::answers`]). Without it the field is
    /// ignored.
    TextRewritten,
    /// The R10 fold leaves auto mode rules after a tool result beside it
    /// ([`super::normalize`]). Without it they are folded in like any reminder.
    AutoModeRulesBeside,
}

impl Rule {
    /// Every rule, in the order the docs list them.
    pub const ALL: [Rule; 3] = [
        Rule::LaterKinds,
        Rule::TextRewritten,
        Rule::AutoModeRulesBeside,
    ];

    /// The first version that follows the rule.
    pub const fn since(self) -> CliVersion {
        match self {
            Rule::LaterKinds | Rule::TextRewritten | Rule::AutoModeRulesBeside => {
                CliVersion::new(2, 1, 333)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        let v: CliVersion = "2.1.332".parse().expect("version");
        assert_eq!(v, CliVersion::OLDEST_CHECKED);
        assert_eq!(v.to_string(), "2.1.332");
        assert_eq!(CliVersion::default().to_string(), "2.1.336");
        assert_eq!(
            "10.0.07".parse::<CliVersion>(),
            Ok(CliVersion::new(10, 0, 7))
        );
        for bad in [
            "",
            "2.1",
            "2.1.3.4",
            "v2.1.332",
            "2.1.x",
            "2..1",
            " 2.1.332",
            "2.1.-3",
            "2.1.+3",
            "2.1.99999999999",
        ] {
            let e = bad.parse::<CliVersion>().expect_err(bad);
            assert!(e.to_string().contains("expected X.Y.Z"), "{e}");
        }
    }

    #[test]
    fn rules_by_version() {
        let v = |s: &str| s.parse::<CliVersion>().expect("version");
        for r in Rule::ALL {
            assert!(!v("2.1.332").follows(r));
            assert!(!v("2.0.50").follows(r));
            assert!(v("2.1.333").follows(r));
            assert!(v("2.1.336").follows(r));
            assert!(v("2.2.0").follows(r));
            assert!(v("3.0.0").follows(r));
            assert!(CliVersion::default().follows(r));
        }
    }
}
