//! Access decisions (R-ACC, R-POL): who may read or write an entry, and what the agent's data
//! policy allows. Pure functions: the store asks, these answer.

use crate::model::{AccessPolicy, DataPolicy, RetentionPolicy, Scope};

/// The gene making a call: a valid v2 id and, optionally, its phenotype domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gene {
    pub id: String,
    pub domain: Option<String>,
}

/// The facts about an entry that access depends on.
#[derive(Debug, Clone, Copy)]
pub struct Owner<'a> {
    pub created_by: &'a str,
    pub creator_domain: Option<&'a str>,
}

/// Does `scope` admit `gene` to an entry owned by `owner`? (R-ACC table, R-ACC-6)
pub fn scope_admits(scope: Scope, owner: Owner<'_>, gene: &Gene) -> bool {
    match scope {
        Scope::CreatorGeneOnly => gene.id == owner.created_by,
        Scope::SameDomain => {
            gene.id == owner.created_by
                || matches!((gene.domain.as_deref(), owner.creator_domain), (Some(a), Some(b)) if a == b)
        }
        Scope::AllGenes => true,
        // No data-policy setting exists for it yet: always denied (R-ACC table).
        Scope::DeployerConfigured => false,
    }
}

/// Why `scope` did not admit the gene, for messages and audit lines.
pub fn denial_reason(op: &str, which: &str, scope: Scope) -> String {
    let who = match scope {
        Scope::CreatorGeneOnly => "only the gene that created it",
        Scope::SameDomain => "only its creator and genes of the creator's domain",
        Scope::AllGenes => "every gene",
        Scope::DeployerConfigured => "no gene in this version (DEPLOYER_CONFIGURED is not configurable yet)",
    };
    format!("{which} {} lets {who} {op} this entry", scope.as_str())
}

/// A policy that this version refuses to store (R-ACC table: `DEPLOYER_CONFIGURED`).
pub fn unsupported_scope(p: &AccessPolicy) -> Option<String> {
    if p.read_scope == Scope::DeployerConfigured || p.write_scope == Scope::DeployerConfigured {
        Some("DEPLOYER_CONFIGURED scopes cannot be set in this version: the data policy has no such setting yet; use CREATOR_GENE_ONLY, SAME_DOMAIN or ALL_GENES".to_string())
    } else {
        None
    }
}

/// R-POL-1 and R-POL-2: is an entry with these policies allowed by the agent's data policy?
pub fn data_policy_violation(policy: &DataPolicy, access: &AccessPolicy, retention: Option<&RetentionPolicy>) -> Option<String> {
    if access.share_policy.needs_anonymization() && !policy.anonymization_supported {
        return Some(format!(
            "sharePolicy {} needs a data policy that supports anonymization, and this agent's does not; use PRIVATE or ask the deployer",
            access.share_policy.as_str()
        ));
    }
    if let (Some(max), Some(r)) = (policy.max_retention_days, retention) {
        match r.max_retention_days {
            None => {
                return Some(format!(
                    "retentionPolicy.maxRetentionDays null (forever) exceeds this agent's maximum of {max} days"
                ))
            }
            Some(days) if days > max => {
                return Some(format!(
                    "retentionPolicy.maxRetentionDays {days} exceeds this agent's maximum of {max} days"
                ))
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SharePolicy;

    fn gene(id: &str, domain: Option<&str>) -> Gene {
        Gene { id: id.into(), domain: domain.map(Into::into) }
    }

    #[test]
    fn scope_matrix() {
        let owner = Owner { created_by: "creator", creator_domain: Some("text") };
        let creator = gene("creator", Some("text"));
        let same = gene("other", Some("text"));
        let upgraded = gene("creator-v2", Some("text"));
        let foreign = gene("other", Some("image"));
        let no_domain = gene("other", None);
        use Scope::*;
        let cases = [
            (CreatorGeneOnly, [true, false, false, false, false]),
            (SameDomain, [true, true, true, false, false]),
            (AllGenes, [true, true, true, true, true]),
            (DeployerConfigured, [false, false, false, false, false]),
        ];
        for (scope, expect) in cases {
            let got = [&creator, &same, &upgraded, &foreign, &no_domain].map(|g| scope_admits(scope, owner, g));
            assert_eq!(got, expect, "{scope:?}");
        }
    }

    #[test]
    fn no_domain_matches_no_domain_only_as_creator() {
        // R-ACC-6: a gene with no domain matches no one's SAME_DOMAIN except its own entries.
        let owner = Owner { created_by: "creator", creator_domain: None };
        assert!(scope_admits(Scope::SameDomain, owner, &gene("creator", None)));
        assert!(!scope_admits(Scope::SameDomain, owner, &gene("other", None)));
        assert!(!scope_admits(Scope::SameDomain, owner, &gene("other", Some("text"))));
    }

    #[test]
    fn data_policy_rules() {
        let private = AccessPolicy::default();
        let shared = AccessPolicy { share_policy: SharePolicy::KnowledgeGene, ..private };
        let closed = DataPolicy::default();
        let open = DataPolicy { anonymization_supported: true, max_retention_days: Some(30) };
        assert!(data_policy_violation(&closed, &private, None).is_none());
        assert!(data_policy_violation(&closed, &shared, None).is_some());
        assert!(data_policy_violation(&open, &shared, None).is_none());
        let keep = |d: Option<i64>| RetentionPolicy { max_retention_days: d, auto_delete_on_termination: false, anonymization_supported: false };
        assert!(data_policy_violation(&open, &private, Some(&keep(Some(30)))).is_none());
        assert!(data_policy_violation(&open, &private, Some(&keep(Some(31)))).is_some());
        assert!(data_policy_violation(&open, &private, Some(&keep(None))).is_some());
        assert!(data_policy_violation(&closed, &private, Some(&keep(None))).is_none());
    }
}
