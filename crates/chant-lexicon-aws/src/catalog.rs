//! The AWS classes of the committed surface snapshot, as static tables the build script wrote:
//! a class is found by binary search, and nothing is parsed at run time.

use std::collections::HashSet;
use std::sync::OnceLock;

use chant_core::lexicon::{Catalog, CatalogEntry};

/// One resource or property class of the catalog.
#[derive(Debug)]
pub struct Class {
    /// `Bucket`, `Role_Policy`.
    pub name: &'static str,
    /// `AWS::S3::Bucket`, `AWS::IAM::Role.Policy`.
    pub resource_type: &'static str,
    /// A resource (else a property type).
    pub resource: bool,
    /// It takes `Tags` that `defaultTags` fills.
    pub taggable: bool,
    /// Attribute names, nested ones joined with `_` (`Endpoint_Address`).
    pub attrs: &'static [&'static str],
    /// `(property, required)`.
    pub props: &'static [(&'static str, bool)],
    /// Properties whose change replaces the resource.
    pub create_only: &'static [&'static str],
}

include!(concat!(env!("OUT_DIR"), "/catalog.rs"));

/// The class named `name`.
pub fn class(name: &str) -> Option<&'static Class> {
    BY_NAME
        .binary_search_by(|&i| CLASSES[i as usize].name.cmp(name))
        .ok()
        .map(|i| &CLASSES[BY_NAME[i] as usize])
}

/// The first resource class of a CloudFormation type (`AWS::IAM::Policy` has two names).
pub fn resource_of_type(resource_type: &str) -> Option<&'static Class> {
    CLASSES
        .iter()
        .find(|c| c.resource && c.resource_type == resource_type)
}

/// The class of a type, resource or property (`AWS::IAM::Role.Policy` → `Role_Policy`).
pub fn class_of_type(resource_type: &str) -> Option<&'static Class> {
    CLASSES.iter().find(|c| c.resource_type == resource_type)
}

/// Whether resources of this type take default tags.
pub fn taggable(resource_type: &str) -> bool {
    static TAGGABLE: OnceLock<HashSet<&'static str>> = OnceLock::new();
    TAGGABLE
        .get_or_init(|| {
            CLASSES
                .iter()
                .filter(|c| c.resource && c.taggable)
                .map(|c| c.resource_type)
                .collect()
        })
        .contains(resource_type)
}

/// The catalog as the core reads it (search, `chant://aws/resource-catalog`), in snapshot order.
pub fn catalog() -> &'static Catalog {
    static C: OnceLock<Catalog> = OnceLock::new();
    C.get_or_init(|| Catalog {
        entries: CLASSES
            .iter()
            .map(|c| CatalogEntry {
                class_name: c.name.to_owned(),
                kind: if c.resource { "resource" } else { "property" }.to_owned(),
                resource_type: c.resource_type.to_owned(),
                attrs: c.attrs.iter().map(|a| (*a).to_owned()).collect(),
                props: c.props.iter().map(|(p, r)| ((*p).to_owned(), *r)).collect(),
            })
            .collect(),
    })
}

/// The CloudFormation form of an attribute name: `Endpoint_Address` → `Endpoint.Address`,
/// `Subscribers_Item_Status` → `Subscribers.*.Status` (the catalog's `_` and `Item`).
pub fn dotted_attribute(attribute: &str) -> String {
    attribute
        .split('_')
        .map(|part| if part == "Item" { "*" } else { part })
        .collect::<Vec<_>>()
        .join(".")
}

/// The name among `candidates` nearest to `name` (edit distance, case ignored), if one is
/// near enough to be what was meant.
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = name.to_lowercase();
    let limit = (name.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| (distance(&lower, &c.to_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, c)| (*d, c.len()))
        .map(|(_, c)| c)
}

/// Levenshtein distance by characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(row[j]).min(row[j + 1])
            };
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_found_by_name_and_type() {
        let bucket = class("Bucket").unwrap();
        assert_eq!(bucket.resource_type, "AWS::S3::Bucket");
        assert!(bucket.resource && bucket.taggable);
        assert!(bucket.attrs.contains(&"Arn"));
        assert_eq!(
            class("Role_Policy").unwrap().resource_type,
            "AWS::IAM::Role.Policy"
        );
        assert!(class("Buckett").is_none());
        assert_eq!(resource_of_type("AWS::SQS::Queue").unwrap().name, "Queue");
        assert!(taggable("AWS::SQS::Queue"));
        assert!(!taggable("AWS::IAM::Policy"));
        assert_eq!(CLASSES.len(), 10_761);
        assert_eq!(CLASSES.iter().filter(|c| c.resource).count(), 1_663);
    }

    #[test]
    fn attributes_and_near_names() {
        assert_eq!(dotted_attribute("Endpoint_Address"), "Endpoint.Address");
        assert_eq!(
            dotted_attribute("Subscribers_Item_Status"),
            "Subscribers.*.Status"
        );
        assert_eq!(dotted_attribute("Arn"), "Arn");
        assert_eq!(
            nearest("BuckeName", ["BucketName", "Tags", "BucketEncryption"]),
            Some("BucketName")
        );
        assert_eq!(nearest("Zzzzzz", ["BucketName"]), None);
    }
}
