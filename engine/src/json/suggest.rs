//! "Did you mean ...?" suggestions for misspelt names.

/// The candidate closest to `input`, if one is close enough to be a likely typo.
///
/// Case-only differences always match; otherwise the normalized Damerau-Levenshtein similarity
/// must be at least 0.6 (so `Helth` finds `Health` and `extend` finds `extends`, but `Armor`
/// does not suggest `Name`). For paths (`enemies/goblin`) the last segments must be that
/// similar too, so a shared directory does not make `enemies/nope` suggest `enemies/case`.
/// Ties go to the candidate listed first, so callers pass a stable order.
pub fn did_you_mean<'a, I>(input: &str, candidates: I) -> Option<String>
where
    I: IntoIterator<Item = &'a str>,
{
    // Names are short: a long input is not a typo of one, and comparing it would cost the
    // product of the two lengths.
    if input.len() > MAX_SUGGESTED_LEN {
        return None;
    }
    let lowered = input.to_lowercase();
    let length = lowered.chars().count();
    let mut best: Option<(f64, &str)> = None;
    for candidate in candidates {
        if candidate == input {
            continue;
        }
        if candidate.len() > MAX_SUGGESTED_LEN {
            continue;
        }
        let candidate_lowered = candidate.to_lowercase();
        let candidate_length = candidate_lowered.chars().count();
        // The edit distance is at least the difference in length: when that alone keeps the
        // similarity under the bar, skip the quadratic comparison (a megabyte-long key must
        // not cost seconds and a matrix of its length times each candidate's).
        let longest = length.max(candidate_length).max(1) as f64;
        let best_possible = 1.0 - length.abs_diff(candidate_length) as f64 / longest;
        let score = if candidate_lowered == lowered {
            2.0
        } else if best_possible < 0.6 {
            continue;
        } else {
            let whole = strsim::normalized_damerau_levenshtein(&lowered, &candidate_lowered);
            let (last, candidate_last) = (last_segment(&lowered), last_segment(&candidate_lowered));
            if (last.len(), candidate_last.len()) == (lowered.len(), candidate_lowered.len()) {
                // Not paths: the last segments are the whole names.
                whole
            } else {
                whole.min(strsim::normalized_damerau_levenshtein(last, candidate_last))
            }
        };
        if score >= 0.6 && best.is_none_or(|(best_score, _)| score > best_score) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, candidate)| candidate.to_string())
}

/// The longest input or candidate (in bytes) compared for a suggestion.
const MAX_SUGGESTED_LEN: usize = 256;

fn last_segment(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
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
        let archetypes = ["enemies/case", "enemies/goblin", "base/creature"];
        assert_eq!(did_you_mean("enemies/nope", archetypes), None);
        assert_eq!(
            did_you_mean("enemies/gobln", archetypes).as_deref(),
            Some("enemies/goblin")
        );
        assert_eq!(
            did_you_mean("enemy/goblin", archetypes).as_deref(),
            Some("enemies/goblin")
        );
        assert_eq!(
            did_you_mean("#turet", ["#", "#turret"]).as_deref(),
            Some("#turret")
        );
    }

    #[test]
    fn a_huge_input_gets_no_suggestion() {
        let huge = "Health".repeat(1_000_000);
        assert_eq!(did_you_mean(&huge, ["Health", "Speed"]), None);
        // Two long names one edit apart are not compared either.
        let long = "x".repeat(300);
        let near = format!("{long}y");
        assert_eq!(did_you_mean(&near, [long.as_str()]), None);
        assert_eq!(did_you_mean("Helth", ["Health"]).as_deref(), Some("Health"));
    }
}
