//! "Did you mean ...?" suggestions for misspelt names.

/// The candidate closest to `input`, if one is close enough to be a likely typo.
///
/// Case-only differences always match; otherwise the normalized Damerau-Levenshtein similarity
/// must be at least 0.6 (so `Helth` finds `Health` and `extend` finds `extends`, but `Armor`
/// does not suggest `Name`). Ties go to the candidate listed first, so callers pass a stable
/// order.
pub(crate) fn did_you_mean<'a, I>(input: &str, candidates: I) -> Option<String>
where
    I: IntoIterator<Item = &'a str>,
{
    let lowered = input.to_lowercase();
    let mut best: Option<(f64, &str)> = None;
    for candidate in candidates {
        if candidate == input {
            continue;
        }
        let score = if candidate.to_lowercase() == lowered {
            2.0
        } else {
            strsim::normalized_damerau_levenshtein(&lowered, &candidate.to_lowercase())
        };
        if score >= 0.6 && best.is_none_or(|(best_score, _)| score > best_score) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, candidate)| candidate.to_string())
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn finds_likely_typos_only() {
        let names = ["Health", "Speed", "Name", "Transform"];
        assert_eq!(did_you_mean("Helth", names).as_deref(), Some("Health"));
        assert_eq!(did_you_mean("health", names).as_deref(), Some("Health"));
        assert_eq!(did_you_mean("Sped", names).as_deref(), Some("Speed"));
        assert_eq!(did_you_mean("Armor", names), None);
        assert_eq!(
            did_you_mean("extend", ["extends"]).as_deref(),
            Some("extends")
        );
        assert_eq!(did_you_mean("Health", names), None);
    }
}
