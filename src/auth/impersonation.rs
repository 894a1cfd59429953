//! Impersonation (`kubectl --as`, `--as-group`, `--as-uid`): the request's
//! `Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid` and
//! `Impersonate-Extra-<key>` headers, read as kube-apiserver's impersonation
//! filter reads them. On a standalone server, whose authorizer allows only
//! `system:masters`, a member of that group may impersonate anyone, as
//! kube-apiserver lets it, and the request is then authorized (and
//! answered, `kubectl auth whoami`) as the user impersonated: `--as=bob`
//! is refused what bob may not do. A server that authorizes through
//! kube-apiserver refuses the headers: requests reach it through the
//! aggregator, which has applied impersonation already.

use http::HeaderMap;

use crate::apimachinery::status::ApiError;
use crate::apimachinery::user::{ANONYMOUS_USER, AUTHENTICATED_GROUP, UserInfo};

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UID: &str = "impersonate-uid";
const EXTRA_PREFIX: &str = "impersonate-extra-";

/// Groups, a uid or extras asked without a user (kube-apiserver's 400).
pub(super) const WITHOUT_USER: &str =
    "requested impersonation of groups, a uid or extras without impersonating a user";

/// The user a request asks to act as, if it asks; `Err` for groups, a uid
/// or extras without a user ([`WITHOUT_USER`]).
pub(super) fn requested(headers: &HeaderMap) -> Result<Option<UserInfo>, &'static str> {
    let text = |v: &http::HeaderValue| String::from_utf8_lossy(v.as_bytes()).into_owned();
    let name = headers.get(USER).map(text);
    let groups: Vec<String> = headers.get_all(GROUP).iter().map(text).collect();
    let uid = headers.get(UID).map(text);
    let mut extra = std::collections::BTreeMap::<String, Vec<String>>::new();
    for (key, value) in headers {
        if let Some(k) = key.as_str().strip_prefix(EXTRA_PREFIX) {
            let k = percent_decoded(k).to_lowercase();
            extra.entry(k).or_default().push(text(value));
        }
    }
    let Some(name) = name else {
        if groups.is_empty() && uid.is_none() && extra.is_empty() {
            return Ok(None);
        }
        return Err(WITHOUT_USER);
    };
    let mut groups = groups;
    if name != ANONYMOUS_USER && !groups.iter().any(|g| g == AUTHENTICATED_GROUP) {
        groups.push(AUTHENTICATED_GROUP.to_owned());
    }
    Ok(Some(UserInfo {
        name,
        uid: uid.unwrap_or_default(),
        groups,
        extra,
    }))
}

/// `key` with its `%XX` escapes decoded (client-go escapes extra keys so
/// that they fit a header name).
fn percent_decoded(key: &str) -> String {
    let bytes = key.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push(u8::try_from(hi * 16 + lo).unwrap_or(b'?'));
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// kube-apiserver's refusal of an impersonation `actor` may not make.
pub(super) fn forbidden(actor: &UserInfo, target: &UserInfo) -> ApiError {
    ApiError::new(
        403,
        "Forbidden",
        format!(
            "users {:?} is forbidden: User {:?} cannot impersonate resource \"users\" in API group \"\" at the cluster scope",
            target.name, actor.name
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_name_the_user_its_groups_uid_and_extras() {
        let mut headers = HeaderMap::new();
        assert!(requested(&headers).unwrap().is_none());
        headers.insert("impersonate-user", "bob".parse().unwrap());
        headers.append("impersonate-group", "dev".parse().unwrap());
        headers.append("impersonate-group", "ops".parse().unwrap());
        headers.insert("impersonate-extra-scopes%2Fv1", "read".parse().unwrap());
        let bob = requested(&headers).unwrap().unwrap();
        assert_eq!(bob.name, "bob");
        assert_eq!(bob.groups, ["dev", "ops", AUTHENTICATED_GROUP]);
        assert_eq!(bob.extra["scopes/v1"], ["read"]);
        let mut groups_only = HeaderMap::new();
        groups_only.insert("impersonate-group", "dev".parse().unwrap());
        assert_eq!(requested(&groups_only).unwrap_err(), WITHOUT_USER);
    }
}
