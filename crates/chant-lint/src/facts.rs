//! What the rules look at, gathered from a file's AST in one walk: imports, constructor sites
//! (`new X({...})`) with their surroundings, top-level exported declarables, `Composite(...)`
//! bindings, identifier occurrences and namespace uses. Rules read these plain facts instead
//! of walking the AST each.

use std::collections::{HashMap, HashSet};

use oxc::ast::ast::{
    Argument, BindingIdentifier, BindingPattern, CallExpression, Class, Declaration,
    ExportDeclaration, Expression, IdentifierName, IdentifierReference, ImportDeclarationSpecifier,
    NewExpression, ObjectExpression, ObjectPropertyKind, Program, PropertyKey, Statement,
    StaticMemberExpression, TSQualifiedName, TSTypeName, VariableDeclarator,
};
use oxc::ast_visit::{Visit, walk};
use oxc::span::GetSpan;

/// One `import` statement.
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    pub source: String,
    /// `import type …`.
    pub type_only: bool,
    /// `import * as <name>`.
    pub namespace: Option<String>,
    /// Named specifiers: local names.
    pub named: Vec<String>,
    pub start: usize,
    pub end: usize,
}

/// A property of an object literal passed as a constructor's first argument.
#[derive(Clone, Debug, PartialEq)]
pub struct Prop {
    /// The key when it is a plain `key: value` (not shorthand, spread, method or computed).
    pub key: Option<String>,
    pub start: usize,
    pub value_start: usize,
    /// The value is an object literal, or an array holding object or array literals.
    pub nested_literal: bool,
}

/// A `new X(...)`.
#[derive(Clone, Debug, PartialEq)]
pub struct NewSite {
    pub start: usize,
    /// `X` of `new X(…)` or `new ns.X(…)`.
    pub class: Option<String>,
    /// The callee is a plain identifier (not `ns.X`).
    pub bare: bool,
    /// `ns` of `new ns.X(…)`.
    pub namespace: Option<String>,
    /// Properties of the first argument when it is an object literal.
    pub props: Option<Vec<Prop>>,
    /// Where a member of that object stops being statically evaluable (EVL001).
    pub non_literal: Vec<usize>,
    /// Inside the factory callback of a `Composite(...)` call.
    pub in_composite_factory: bool,
    /// Inside the initializer of an exported variable.
    pub in_exported_var: bool,
    /// The nearest enclosing variable's name.
    pub var_name: Option<String>,
}

/// `export const <name> = new <Class>(…)` at the top level.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportedNew {
    pub name: String,
    pub name_start: usize,
    pub statement_start: usize,
    pub statement_end: usize,
    pub class: Option<String>,
}

/// `const <name> = Composite(factory, "<Name>"?)`.
#[derive(Clone, Debug, PartialEq)]
pub struct CompositeBinding {
    pub name: String,
    pub callee_start: usize,
    pub factory_end: Option<usize>,
    /// The second argument: `(start, end, string value if a literal)`.
    pub name_arg: Option<(usize, usize, Option<String>)>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Facts {
    pub imports: Vec<Import>,
    pub news: Vec<NewSite>,
    pub exported_news: Vec<ExportedNew>,
    pub composites: Vec<CompositeBinding>,
    /// Every identifier occurrence (references, names, bindings) by text: starts.
    pub identifiers: HashMap<String, Vec<usize>>,
    /// Names used as `name.x` or in a type `name.X`.
    pub member_objects: HashSet<String>,
    /// Classes declared here that extend or implement `Declarable`.
    pub local_declarable_classes: HashSet<String>,
    /// `key: value` properties (plain identifier keys) anywhere inside a constructor's
    /// arguments: key and start.
    pub props_in_new: Vec<(String, usize)>,
    /// Calls of `GetAtt`/`Ref` (or `ns.GetAtt`/`ns.Ref`) with a string-literal argument:
    /// function name and start.
    pub string_refs: Vec<(String, usize)>,
    /// `Composite<Props>(…)`: the props type names.
    pub composite_props_types: Vec<String>,
    /// Interfaces and type aliases declared here: name, start, and for an interface each
    /// property's name with the type names its type refers to.
    pub local_types: Vec<LocalType>,
}

/// An interface or type alias declared in the file.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalType {
    pub name: String,
    pub start: usize,
    /// `(field, referenced type names)` of an interface's property signatures.
    pub fields: Vec<(String, Vec<String>)>,
}

/// Type names `t` refers to, through arrays, unions, intersections and type arguments.
fn type_refs(t: &oxc::ast::ast::TSType<'_>, out: &mut Vec<String>) {
    use oxc::ast::ast::TSType;
    match t {
        TSType::TSTypeReference(r) => {
            if let TSTypeName::IdentifierReference(i) = &r.type_name {
                out.push(i.name.to_string());
            }
            for a in r.type_arguments.iter().flat_map(|a| a.params.iter()) {
                type_refs(a, out);
            }
        }
        TSType::TSArrayType(a) => type_refs(&a.element_type, out),
        TSType::TSUnionType(u) => u.types.iter().for_each(|t| type_refs(t, out)),
        TSType::TSIntersectionType(u) => u.types.iter().for_each(|t| type_refs(t, out)),
        _ => {}
    }
}

fn start(span: oxc::span::Span) -> usize {
    span.start as usize
}

fn class_of(callee: &Expression<'_>) -> (Option<String>, bool) {
    match callee {
        Expression::Identifier(i) => (Some(i.name.to_string()), true),
        Expression::StaticMemberExpression(m) => (Some(m.property.name.to_string()), false),
        _ => (None, false),
    }
}

fn is_composite_callee(callee: &Expression<'_>) -> bool {
    matches!(class_of(callee), (Some(n), _) if n == "Composite")
}

/// The first place `e` stops being statically evaluable: calls and other dynamic forms.
/// Literals, identifiers, member access, object/array literals, templates, operators, casts
/// and nested constructors are allowed (their contents are checked).
fn first_dynamic(e: &Expression<'_>, intrinsics: &[String]) -> Option<usize> {
    let first_dynamic = |e: &Expression<'_>| first_dynamic(e, intrinsics);
    match e {
        Expression::BooleanLiteral(_)
        | Expression::NullLiteral(_)
        | Expression::NumericLiteral(_)
        | Expression::BigIntLiteral(_)
        | Expression::RegExpLiteral(_)
        | Expression::StringLiteral(_)
        | Expression::Identifier(_)
        | Expression::ThisExpression(_)
        | Expression::NewExpression(_) => None,
        Expression::TemplateLiteral(t) => t.expressions.iter().find_map(first_dynamic),
        // A tagged template is a lexicon's intrinsic (`Sub`...``) or opaque, as in the reference:
        // its interpolations are deploy-time references.
        Expression::TaggedTemplateExpression(_) => None,
        // A call of one of the project's lexicons' intrinsics (`Ref(x)`, `Join(",", [...])`):
        // its arguments are checked.
        Expression::CallExpression(c) if matches!(&c.callee, Expression::Identifier(i) if intrinsics.iter().any(|n| n == i.name.as_str())) => {
            c.arguments.iter().find_map(|a| match a {
                oxc::ast::ast::Argument::SpreadElement(s) => first_dynamic(&s.argument),
                other => other.as_expression().and_then(first_dynamic),
            })
        }
        Expression::ArrayExpression(a) => a.elements.iter().find_map(|el| {
            if let oxc::ast::ast::ArrayExpressionElement::SpreadElement(s) = el {
                first_dynamic(&s.argument)
            } else {
                el.as_expression().and_then(first_dynamic)
            }
        }),
        Expression::ObjectExpression(o) => object_dynamic(o, intrinsics).into_iter().next(),
        Expression::StaticMemberExpression(m) => first_dynamic(&m.object),
        Expression::ComputedMemberExpression(m) => {
            first_dynamic(&m.object).or_else(|| first_dynamic(&m.expression))
        }
        Expression::PrivateFieldExpression(m) => first_dynamic(&m.object),
        Expression::BinaryExpression(b) => {
            first_dynamic(&b.left).or_else(|| first_dynamic(&b.right))
        }
        Expression::LogicalExpression(b) => {
            first_dynamic(&b.left).or_else(|| first_dynamic(&b.right))
        }
        Expression::ConditionalExpression(c) => first_dynamic(&c.test)
            .or_else(|| first_dynamic(&c.consequent))
            .or_else(|| first_dynamic(&c.alternate)),
        Expression::UnaryExpression(u) => first_dynamic(&u.argument),
        Expression::ParenthesizedExpression(p) => first_dynamic(&p.expression),
        Expression::TSAsExpression(x) => first_dynamic(&x.expression),
        Expression::TSSatisfiesExpression(x) => first_dynamic(&x.expression),
        Expression::TSNonNullExpression(x) => first_dynamic(&x.expression),
        Expression::TSTypeAssertion(x) => first_dynamic(&x.expression),
        other => Some(start(other.span())),
    }
}

/// [`first_dynamic`] of each member of an object literal (a spread's argument included).
fn object_dynamic(o: &ObjectExpression<'_>, intrinsics: &[String]) -> Vec<usize> {
    o.properties
        .iter()
        .filter_map(|p| match p {
            ObjectPropertyKind::ObjectProperty(p) => {
                if p.method {
                    Some(start(p.value.span()))
                } else {
                    first_dynamic(&p.value, intrinsics)
                }
            }
            ObjectPropertyKind::SpreadProperty(s) => first_dynamic(&s.argument, intrinsics),
        })
        .collect()
}

fn props_of(o: &ObjectExpression<'_>) -> Vec<Prop> {
    o.properties
        .iter()
        .map(|p| match p {
            ObjectPropertyKind::ObjectProperty(p) => {
                let key = match &p.key {
                    PropertyKey::StaticIdentifier(k)
                        if !p.shorthand && !p.method && !p.computed =>
                    {
                        Some(k.name.to_string())
                    }
                    _ => None,
                };
                let nested_literal = key.is_some()
                    && match &p.value {
                        Expression::ObjectExpression(_) => true,
                        Expression::ArrayExpression(a) => a.elements.iter().any(|el| {
                            matches!(
                                el.as_expression(),
                                Some(
                                    Expression::ObjectExpression(_)
                                        | Expression::ArrayExpression(_)
                                )
                            )
                        }),
                        _ => false,
                    };
                Prop {
                    key,
                    start: start(p.span),
                    value_start: start(p.value.span()),
                    nested_literal,
                }
            }
            ObjectPropertyKind::SpreadProperty(s) => Prop {
                key: None,
                start: start(s.span),
                value_start: start(s.argument.span()),
                nested_literal: false,
            },
        })
        .collect()
}

#[derive(Default)]
struct Collector {
    facts: Facts,
    composite_depth: usize,
    exported_depth: usize,
    new_depth: usize,
    vars: Vec<String>,
    intrinsics: Vec<String>,
}

impl<'a> Visit<'a> for Collector {
    fn visit_new_expression(&mut self, it: &NewExpression<'a>) {
        let (class, bare) = class_of(&it.callee);
        let object = match it.arguments.first() {
            Some(Argument::ObjectExpression(o)) => Some(o),
            _ => None,
        };
        let namespace = match &it.callee {
            Expression::StaticMemberExpression(m) => match &m.object {
                Expression::Identifier(i) => Some(i.name.to_string()),
                _ => None,
            },
            _ => None,
        };
        self.facts.news.push(NewSite {
            start: start(it.span),
            class,
            bare,
            namespace,
            props: object.map(|o| props_of(o)),
            non_literal: object
                .map(|o| object_dynamic(o, &self.intrinsics))
                .unwrap_or_default(),
            in_composite_factory: self.composite_depth > 0,
            in_exported_var: self.exported_depth > 0,
            var_name: self.vars.last().cloned(),
        });
        self.new_depth += 1;
        walk::walk_new_expression(self, it);
        self.new_depth -= 1;
    }

    fn visit_object_property(&mut self, it: &oxc::ast::ast::ObjectProperty<'a>) {
        if self.new_depth > 0
            && !it.shorthand
            && !it.method
            && !it.computed
            && let PropertyKey::StaticIdentifier(k) = &it.key
        {
            self.facts
                .props_in_new
                .push((k.name.to_string(), start(it.span)));
        }
        walk::walk_object_property(self, it);
    }

    fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
        if let (Some(f), _) = class_of(&it.callee)
            && (f == "GetAtt" || f == "Ref")
            && it
                .arguments
                .iter()
                .any(|a| matches!(a, Argument::StringLiteral(_)))
        {
            self.facts.string_refs.push((f, start(it.span)));
        }
        if is_composite_callee(&it.callee)
            && let Some(oxc::ast::ast::TSType::TSTypeReference(r)) =
                it.type_arguments.as_ref().and_then(|t| t.params.first())
            && let TSTypeName::IdentifierReference(i) = &r.type_name
        {
            self.facts.composite_props_types.push(i.name.to_string());
        }
        if is_composite_callee(&it.callee) {
            self.composite_depth += 1;
            walk::walk_call_expression(self, it);
            self.composite_depth -= 1;
        } else {
            walk::walk_call_expression(self, it);
        }
    }

    fn visit_export_declaration(&mut self, it: &ExportDeclaration<'a>) {
        self.exported_depth += 1;
        walk::walk_export_declaration(self, it);
        self.exported_depth -= 1;
    }

    fn visit_variable_declarator(&mut self, it: &VariableDeclarator<'a>) {
        let name = match &it.id {
            BindingPattern::BindingIdentifier(b) => Some(b.name.to_string()),
            _ => None,
        };
        if let (Some(name), Some(Expression::CallExpression(call))) = (&name, &it.init)
            && is_composite_callee(&call.callee)
        {
            let arg_span = |a: &Argument<'_>| a.span();
            self.facts.composites.push(CompositeBinding {
                name: name.clone(),
                callee_start: start(call.callee.span()),
                factory_end: call.arguments.first().map(|a| arg_span(a).end as usize),
                name_arg: call.arguments.get(1).map(|a| {
                    let s = arg_span(a);
                    let value = match a {
                        Argument::StringLiteral(l) => Some(l.value.to_string()),
                        _ => None,
                    };
                    (s.start as usize, s.end as usize, value)
                }),
            });
        }
        if let Some(n) = &name {
            self.vars.push(n.clone());
        }
        walk::walk_variable_declarator(self, it);
        if name.is_some() {
            self.vars.pop();
        }
    }

    fn visit_ts_interface_declaration(&mut self, it: &oxc::ast::ast::TSInterfaceDeclaration<'a>) {
        let fields = it
            .body
            .body
            .iter()
            .filter_map(|sig| match sig {
                oxc::ast::ast::TSSignature::TSPropertySignature(p) => {
                    let name = match &p.key {
                        PropertyKey::StaticIdentifier(k) => k.name.to_string(),
                        _ => "<computed>".to_owned(),
                    };
                    let mut refs = Vec::new();
                    if let Some(t) = &p.type_annotation {
                        type_refs(&t.type_annotation, &mut refs);
                    }
                    Some((name, refs))
                }
                _ => None,
            })
            .collect();
        self.facts.local_types.push(LocalType {
            name: it.id.name.to_string(),
            start: start(it.span),
            fields,
        });
        walk::walk_ts_interface_declaration(self, it);
    }

    fn visit_ts_type_alias_declaration(&mut self, it: &oxc::ast::ast::TSTypeAliasDeclaration<'a>) {
        self.facts.local_types.push(LocalType {
            name: it.id.name.to_string(),
            start: start(it.span),
            fields: Vec::new(),
        });
        walk::walk_ts_type_alias_declaration(self, it);
    }

    fn visit_class(&mut self, it: &Class<'a>) {
        let heritage_names = it
            .heritage
            .iter()
            .filter_map(|h| match &h.expression {
                Expression::Identifier(i) => Some(i.name.as_str()),
                _ => None,
            })
            .chain(it.implements.iter().filter_map(|i| match &i.expression {
                TSTypeName::IdentifierReference(r) => Some(r.name.as_str()),
                _ => None,
            }));
        if heritage_names.into_iter().any(|n| n == "Declarable")
            && let Some(id) = &it.id
        {
            self.facts
                .local_declarable_classes
                .insert(id.name.to_string());
        }
        walk::walk_class(self, it);
    }

    fn visit_identifier_reference(&mut self, it: &IdentifierReference<'a>) {
        self.facts
            .identifiers
            .entry(it.name.to_string())
            .or_default()
            .push(start(it.span));
    }

    fn visit_identifier_name(&mut self, it: &IdentifierName<'a>) {
        self.facts
            .identifiers
            .entry(it.name.to_string())
            .or_default()
            .push(start(it.span));
    }

    fn visit_binding_identifier(&mut self, it: &BindingIdentifier<'a>) {
        self.facts
            .identifiers
            .entry(it.name.to_string())
            .or_default()
            .push(start(it.span));
    }

    fn visit_static_member_expression(&mut self, it: &StaticMemberExpression<'a>) {
        if let Expression::Identifier(i) = &it.object {
            self.facts.member_objects.insert(i.name.to_string());
        }
        walk::walk_static_member_expression(self, it);
    }

    fn visit_ts_qualified_name(&mut self, it: &TSQualifiedName<'a>) {
        if let TSTypeName::IdentifierReference(i) = &it.left {
            self.facts.member_objects.insert(i.name.to_string());
        }
        walk::walk_ts_qualified_name(self, it);
    }
}

impl Facts {
    /// The facts of a program; `intrinsics` are the call names the project's lexicons
    /// evaluate statically (EVL001 lets their calls through).
    pub fn gather(program: &Program<'_>, intrinsics: &[String]) -> Facts {
        let mut c = Collector {
            intrinsics: intrinsics.to_vec(),
            ..Collector::default()
        };
        for stmt in &program.body {
            match stmt {
                Statement::ImportDeclaration(d) => {
                    let mut import = Import {
                        source: d.source.value.to_string(),
                        type_only: d.import_kind.is_type(),
                        namespace: None,
                        named: Vec::new(),
                        start: start(d.span),
                        end: d.span.end as usize,
                    };
                    for s in d.specifiers.iter().flatten() {
                        match s {
                            ImportDeclarationSpecifier::ImportNamespaceSpecifier(n) => {
                                import.namespace = Some(n.local.name.to_string());
                            }
                            ImportDeclarationSpecifier::ImportSpecifier(n) => {
                                import.named.push(n.local.name.to_string());
                            }
                            ImportDeclarationSpecifier::ImportDefaultSpecifier(n) => {
                                import.named.push(n.local.name.to_string());
                            }
                        }
                    }
                    c.facts.imports.push(import);
                }
                Statement::ExportDeclaration(e) => {
                    if let Declaration::VariableDeclaration(v) = &e.declaration {
                        for d in &v.declarations {
                            if let (
                                BindingPattern::BindingIdentifier(b),
                                Some(Expression::NewExpression(n)),
                            ) = (&d.id, &d.init)
                            {
                                c.facts.exported_news.push(ExportedNew {
                                    name: b.name.to_string(),
                                    name_start: start(b.span),
                                    statement_start: start(e.span),
                                    statement_end: e.span.end as usize,
                                    class: class_of(&n.callee).0,
                                });
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        c.visit_program(program);
        c.facts
    }
}
