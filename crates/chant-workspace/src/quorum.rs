//! Reviews and quorum: which verdicts on a record count, and whether they meet the need.
//!
//! Each verdict meets the rules in order and the first that applies leaves it uncounted:
//! the decider's own, an agent's (the agent role at base), one given on an older digest, one
//! without a seal while attestation is on, and an earlier verdict by a principal who gave a
//! later one that passed the rules before it.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

pub use crate::principal::principal;

/// What judges verdicts besides the record: read at base.
pub struct Judge<'a> {
    pub need: u64,
    /// `declaration` or `default`.
    pub need_from: &'static str,
    /// Principals the agent role lists at base, compared form.
    pub agents: &'a HashSet<String>,
    /// A signers file exists at base.
    pub attestation: bool,
}

/// The `quorum` block of a record whose reviews are `reviews`, decider `decider` and digest
/// `digest`, and the reviewers whose verdicts carry no digest. `seals` holds what each
/// verdict's seal establishes (see [`crate::seal::check`]), one per review.
pub fn quorum(
    reviews: &[Value],
    decider: Option<&str>,
    digest: &str,
    judge: &Judge,
    seals: &[crate::seal::Attestation],
) -> (Value, Vec<String>) {
    let decider = decider.map(principal);
    let mut undigested = Vec::new();
    // The verdicts that pass the first four rules, by index, before duplicates are settled.
    let mut passed: Vec<(usize, String)> = Vec::new();
    let mut reasons: Vec<Option<(&'static str, String)>> = vec![None; reviews.len()];
    for (i, r) in reviews.iter().enumerate() {
        let reviewer = r.get("reviewer").and_then(Value::as_str).unwrap_or("");
        let p = principal(reviewer);
        let given = r.get("digest").and_then(Value::as_str);
        if given.is_none() {
            undigested.push(reviewer.to_owned());
        }
        let short = |d: &str| d.chars().take(12).collect::<String>();
        let reason = if decider.as_deref() == Some(p.as_str()) {
            Some((
                "review-decider",
                format!(
                    "{reviewer} decided this record, and the quorum counts verdicts besides the decider's"
                ),
            ))
        } else if judge.agents.contains(&p) {
            Some((
                "review-agent",
                format!(
                    "{reviewer} holds the agent role in the trust policy at base, and an agent's verdict does not count"
                ),
            ))
        } else if let Some(g) = given.filter(|g| *g != digest) {
            Some((
                "review-older-digest",
                format!(
                    "{reviewer} judged the text at digest {}, and the record's text is now at {}",
                    short(g),
                    short(digest)
                ),
            ))
        } else if judge.attestation && seals.get(i).is_none_or(|a| a.attested != Some(true)) {
            Some((
                "review-unattested",
                format!(
                    "an attestation policy is active at base, and the verdict by {reviewer} carries no seal that verifies for its reviewer: {}",
                    seals
                        .get(i)
                        .map_or("it carries no seal", |a| a.message.as_str())
                ),
            ))
        } else {
            None
        };
        match reason {
            Some(r) => reasons[i] = Some(r),
            None => passed.push((i, p)),
        }
    }
    let mut later: HashSet<&str> = HashSet::new();
    for (i, p) in passed.iter().rev() {
        if !later.insert(p.as_str()) {
            let replaced_by = passed
                .iter()
                .rev()
                .find(|(j, q)| q == p && j > i)
                .map(|(j, _)| *j)
                .unwrap_or(*i);
            let by = reviews[replaced_by]
                .get("reviewer")
                .and_then(Value::as_str)
                .unwrap_or("");
            reasons[*i] = Some((
                "review-duplicate",
                format!(
                    "the later verdict by \"{by}\" (entry {replaced_by}) replaces this one, and a principal counts once"
                ),
            ));
        }
    }
    let mut counted = Vec::new();
    let mut not_counted = Vec::new();
    let mut open = Vec::new();
    let mut agreed = 0u64;
    for (i, r) in reviews.iter().enumerate() {
        let reviewer = r.get("reviewer").and_then(Value::as_str).unwrap_or("");
        let verdict = r.get("verdict").and_then(Value::as_str).unwrap_or("");
        let mut entry = Map::new();
        entry.insert("index".into(), json!(i));
        entry.insert("principal".into(), json!(principal(reviewer)));
        entry.insert("reviewer".into(), json!(reviewer));
        entry.insert("verdict".into(), json!(verdict));
        entry.insert(
            "digest".into(),
            r.get("digest").cloned().unwrap_or(Value::Null),
        );
        if let Some(a) = seals.get(i) {
            entry.insert("attested".into(), json!(a.attested));
            entry.insert("attestation".into(), a.block());
        }
        if verdict == "dissent"
            && r.get("addressed_by").is_none_or(Value::is_null)
            && r.get("withdrawn_on").is_none_or(Value::is_null)
        {
            open.push(json!({
                "index": i,
                "principal": principal(reviewer),
                "reviewer": reviewer,
                "note": r.get("note").cloned().unwrap_or(Value::Null),
            }));
        }
        match &reasons[i] {
            Some((code, message)) => {
                entry.insert("reason".into(), json!({"code": code, "message": message}));
                not_counted.push(Value::Object(entry));
            }
            None => {
                if verdict == "agree" {
                    agreed += 1;
                }
                counted.push(Value::Object(entry));
            }
        }
    }
    let met = agreed >= judge.need;
    let objections = met && !open.is_empty();
    (
        // Built by hand: `json!` would serialize a copy of each list.
        Value::Object(Map::from_iter([
            ("need".to_owned(), json!(judge.need)),
            ("needFrom".to_owned(), json!(judge.need_from)),
            ("agreed".to_owned(), json!(agreed)),
            ("counted".to_owned(), Value::Array(counted)),
            ("notCounted".to_owned(), Value::Array(not_counted)),
            ("openConcerns".to_owned(), Value::Array(open)),
            ("met".to_owned(), json!(met)),
            ("metWithObjections".to_owned(), json!(objections)),
        ])),
        undigested,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(agents: &HashSet<String>, attestation: bool) -> Judge<'_> {
        Judge {
            need: 2,
            need_from: "default",
            agents,
            attestation,
        }
    }

    fn v(reviewer: &str, verdict: &str, digest: Option<&str>) -> Value {
        let mut r = json!({"reviewer": reviewer, "verdict": verdict, "on": "2026-12-03"});
        if let Some(d) = digest {
            r["digest"] = json!(d);
        }
        r
    }

    fn codes(q: &Value) -> Vec<(u64, String)> {
        q["notCounted"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                (
                    n["index"].as_u64().unwrap(),
                    n["reason"]["code"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn each_rule_applies_in_order_and_the_later_duplicate_wins() {
        let agents: HashSet<String> = ["bot".to_owned()].into();
        let reviews = [
            v("Lex00", "agree", Some("d")),
            v("bot", "agree", Some("d")),
            v("carol", "agree", Some("old")),
            v("alice", "dissent", Some("d")),
            v("Alice ", "agree", Some("d")),
            v("dave", "agree", None),
        ];
        let (q, undigested) = quorum(&reviews, Some("lex00"), "d", &judge(&agents, false), &[]);
        assert_eq!(
            codes(&q),
            [
                (0, "review-decider".to_owned()),
                (1, "review-agent".to_owned()),
                (2, "review-older-digest".to_owned()),
                (3, "review-duplicate".to_owned()),
            ]
        );
        assert_eq!(q["agreed"], 2);
        assert_eq!(q["met"], true);
        assert_eq!(
            q["metWithObjections"], true,
            "alice's dissent is still open"
        );
        assert_eq!(undigested, ["dave"]);
        assert!(
            q["notCounted"][3]["reason"]["message"]
                .as_str()
                .unwrap()
                .contains("\"Alice \" (entry 4)")
        );
    }

    #[test]
    fn under_attestation_no_verdict_counts_and_the_decider_rule_still_comes_first() {
        let agents = HashSet::new();
        let reviews = [v("a", "agree", Some("d")), v("x", "agree", Some("d"))];
        let (q, _) = quorum(&reviews, Some("x"), "d", &judge(&agents, true), &[]);
        assert_eq!(
            codes(&q),
            [
                (0, "review-unattested".to_owned()),
                (1, "review-decider".to_owned())
            ]
        );
        assert_eq!(q["met"], false);
    }

    #[test]
    fn an_addressed_dissent_is_no_open_concern() {
        let agents = HashSet::new();
        let mut d = v("b", "dissent", Some("d"));
        d["addressed_by"] = json!("ws-002");
        let reviews = [v("a", "agree", Some("d")), v("c", "agree", Some("d")), d];
        let (q, _) = quorum(&reviews, None, "d", &judge(&agents, false), &[]);
        assert_eq!(q["met"], true);
        assert_eq!(q["openConcerns"], json!([]));
        assert_eq!(q["metWithObjections"], false);
    }
}
