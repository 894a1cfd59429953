//! Who is calling: `user.Info` of k8s.io/apiserver
//! `pkg/authentication/user`, the identity authentication produces,
//! authorization asks about and impersonated writes carry upstream, with the
//! well-known users and groups.

use std::collections::BTreeMap;

/// The group every authenticated user gets (`AS/pkg/authentication/group`).
pub const AUTHENTICATED_GROUP: &str = "system:authenticated";
/// The group of unauthenticated callers.
pub const UNAUTHENTICATED_GROUP: &str = "system:unauthenticated";
/// The anonymous user's name.
pub const ANONYMOUS_USER: &str = "system:anonymous";
/// The group that is always authorized without a SubjectAccessReview.
pub const MASTERS_GROUP: &str = "system:masters";

/// An authenticated caller (`user.Info`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct UserInfo {
    /// User name.
    pub name: String,
    /// UID, if the authenticator knows one.
    pub uid: String,
    /// Groups, in the order the authenticator gave them.
    pub groups: Vec<String>,
    /// Extra attributes (keys lower-case for the front proxy).
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// The anonymous caller.
    pub fn anonymous() -> UserInfo {
        UserInfo {
            name: ANONYMOUS_USER.to_owned(),
            groups: vec![UNAUTHENTICATED_GROUP.to_owned()],
            ..UserInfo::default()
        }
    }

    /// Adds `system:authenticated` unless the user is anonymous or already
    /// has it or `system:unauthenticated` (upstream `AuthenticatedGroupAdder`).
    pub fn with_authenticated_group(mut self) -> UserInfo {
        if self.name != ANONYMOUS_USER
            && !self
                .groups
                .iter()
                .any(|g| g == AUTHENTICATED_GROUP || g == UNAUTHENTICATED_GROUP)
        {
            self.groups.push(AUTHENTICATED_GROUP.to_owned());
        }
        self
    }

    /// Whether the user is in `system:masters`.
    pub fn is_master(&self) -> bool {
        self.groups.iter().any(|g| g == MASTERS_GROUP)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authenticated_group_rules() {
        let u = |name: &str, groups: &[&str]| UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            ..UserInfo::default()
        };
        assert_eq!(
            u("alice", &["dev"]).with_authenticated_group().groups,
            ["dev", AUTHENTICATED_GROUP]
        );
        assert_eq!(
            u("alice", &[AUTHENTICATED_GROUP])
                .with_authenticated_group()
                .groups,
            [AUTHENTICATED_GROUP]
        );
        assert_eq!(
            u("x", &[UNAUTHENTICATED_GROUP])
                .with_authenticated_group()
                .groups,
            [UNAUTHENTICATED_GROUP]
        );
        assert!(
            u(ANONYMOUS_USER, &[])
                .with_authenticated_group()
                .groups
                .is_empty()
        );
    }
}
