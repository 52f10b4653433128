//! The AWS classes of the committed surface snapshot, as static tables the build script wrote:
//! a class is found by binary search, and nothing is parsed at run time.

use std::collections::HashSet;
use std::sync::OnceLock;

use chant_core::lexicon::{Catalog, CatalogEntry};

/// One class of the tables: spans into [`TEXT`] and [`LIST`], no pointers.
struct Raw {
    name: u32,
    resource_type: u32,
    /// Bit 0: a resource; bit 1: taggable.
    flags: u8,
    attrs: (u32, u32),
    props: (u32, u32),
    create_only: (u32, u32),
}

include!(concat!(env!("OUT_DIR"), "/catalog.rs"));

fn text(id: u32) -> &'static str {
    let (start, len) = SPANS[(id & !(1 << 31)) as usize];
    &TEXT[start as usize..(start + len) as usize]
}

fn items((start, len): (u32, u32)) -> impl Iterator<Item = (&'static str, bool)> {
    LIST[start as usize..(start + len) as usize]
        .iter()
        .map(|&id| (text(id), id & (1 << 31) != 0))
}

/// One resource or property class of the catalog.
#[derive(Clone, Copy)]
pub struct Class {
    raw: &'static Raw,
}

impl std::fmt::Debug for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Class({} = {})", self.name(), self.resource_type())
    }
}

impl PartialEq for Class {
    fn eq(&self, other: &Class) -> bool {
        std::ptr::eq(self.raw, other.raw)
    }
}

impl Class {
    /// `Bucket`, `Role_Policy`.
    pub fn name(self) -> &'static str {
        text(self.raw.name)
    }

    /// `AWS::S3::Bucket`, `AWS::IAM::Role.Policy`.
    pub fn resource_type(self) -> &'static str {
        text(self.raw.resource_type)
    }

    /// A resource (else a property type).
    pub fn resource(self) -> bool {
        self.raw.flags & 1 != 0
    }

    /// It takes `Tags` that `defaultTags` fills.
    pub fn taggable(self) -> bool {
        self.raw.flags & 2 != 0
    }

    /// Attribute names, nested ones joined with `_` (`Endpoint_Address`).
    pub fn attrs(self) -> impl Iterator<Item = &'static str> {
        items(self.raw.attrs).map(|(a, _)| a)
    }

    pub fn has_attr(self, attribute: &str) -> bool {
        self.attrs().any(|a| a == attribute)
    }

    /// `(property, required)`.
    pub fn props(self) -> impl Iterator<Item = (&'static str, bool)> {
        items(self.raw.props)
    }

    /// Properties whose change replaces the resource.
    pub fn create_only(self) -> impl Iterator<Item = &'static str> {
        items(self.raw.create_only).map(|(a, _)| a)
    }
}

/// Every class, in snapshot order.
pub fn all() -> impl Iterator<Item = Class> {
    RAW.iter().map(|raw| Class { raw })
}

/// How many classes the catalog has.
pub fn len() -> usize {
    RAW.len()
}

/// The class named `name`.
pub fn class(name: &str) -> Option<Class> {
    BY_NAME
        .binary_search_by(|&i| text(RAW[i as usize].name).cmp(name))
        .ok()
        .map(|i| Class {
            raw: &RAW[BY_NAME[i] as usize],
        })
}

/// The first resource class of a CloudFormation type (`AWS::IAM::Policy` has two names).
pub fn resource_of_type(resource_type: &str) -> Option<Class> {
    all().find(|c| c.resource() && c.resource_type() == resource_type)
}

/// The class of a type, resource or property (`AWS::IAM::Role.Policy` → `Role_Policy`).
pub fn class_of_type(resource_type: &str) -> Option<Class> {
    all().find(|c| c.resource_type() == resource_type)
}

/// Whether resources of this type take default tags.
pub fn taggable(resource_type: &str) -> bool {
    static TAGGABLE: OnceLock<HashSet<&'static str>> = OnceLock::new();
    TAGGABLE
        .get_or_init(|| {
            all()
                .filter(|c| c.resource() && c.taggable())
                .map(|c| c.resource_type())
                .collect()
        })
        .contains(resource_type)
}

/// The catalog as the core reads it (search, `chant://aws/resource-catalog`), in snapshot order.
pub fn catalog() -> &'static Catalog {
    static C: OnceLock<Catalog> = OnceLock::new();
    C.get_or_init(|| Catalog {
        entries: all()
            .map(|c| CatalogEntry {
                class_name: c.name().to_owned(),
                kind: if c.resource() { "resource" } else { "property" }.to_owned(),
                resource_type: c.resource_type().to_owned(),
                attrs: c.attrs().map(str::to_owned).collect(),
                props: c.props().map(|(p, r)| (p.to_owned(), r)).collect(),
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
    let len = name.chars().count();
    let limit = (len / 3).max(2);
    // A candidate whose length differs by more than the limit cannot be near enough: skipped
    // before the quadratic distance is computed.
    candidates
        .into_iter()
        .filter(|c| c.chars().count().abs_diff(len) <= limit)
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
        assert_eq!(bucket.resource_type(), "AWS::S3::Bucket");
        assert!(bucket.resource() && bucket.taggable());
        assert!(bucket.has_attr("Arn"));
        assert!(bucket.props().any(|p| p == ("BucketName", false)));
        assert!(bucket.create_only().any(|p| p == "BucketName"));
        assert_eq!(
            class("Role_Policy").unwrap().resource_type(),
            "AWS::IAM::Role.Policy"
        );
        assert!(class("Buckett").is_none());
        assert_eq!(resource_of_type("AWS::SQS::Queue").unwrap().name(), "Queue");
        assert!(taggable("AWS::SQS::Queue"));
        assert!(!taggable("AWS::IAM::Policy"));
        assert_eq!(len(), 10_761);
        assert_eq!(all().filter(|c| c.resource()).count(), 1_663);
        // Required properties keep their flag.
        let role = class("Role").unwrap();
        assert!(
            role.props()
                .any(|p| p == ("AssumeRolePolicyDocument", true))
        );
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
