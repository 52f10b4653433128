//! TypeScript to JavaScript with the oxc crates: parse, strip types (enums, `satisfies`, `as`,
//! `import type` handled by the transformer), print, and keep a position map back to the source.

use std::path::Path;

use oxc::allocator::Allocator;
use oxc::codegen::{Codegen, CodegenOptions};
use oxc::parser::Parser;
use oxc::semantic::SemanticBuilder;
use oxc::span::SourceType;
use oxc::transformer::{TransformOptions, Transformer};

/// A 1-based position in a source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: u32,
    pub column: u32,
}

/// A syntax error in a TypeScript file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub message: String,
    pub position: Position,
}

/// The JavaScript for one file, and how to map its positions back to the TypeScript.
#[derive(Clone, Debug)]
pub struct Stripped {
    pub code: String,
    /// What the module imports from each bare specifier after types are gone, in order of
    /// first appearance: `Some(names)` when it only takes named bindings (`import { a, b }`,
    /// `export { a } from`), `None` when it needs the whole module (a namespace, a default,
    /// `export *`, a bare `import "x"`).
    pub imports: Vec<(String, Option<Vec<String>>)>,
    /// `(generated line, generated column, source line, source column)`, 0-based, sorted.
    tokens: Vec<(u32, u32, u32, u32)>,
}

impl Stripped {
    /// The source position of a 1-based generated position, when the map knows it.
    pub fn original(&self, line: u32, column: u32) -> Option<Position> {
        let (l, c) = (line.checked_sub(1)?, column.saturating_sub(1));
        let idx = self.tokens.partition_point(|t| (t.0, t.1) <= (l, c));
        let t = self.tokens.get(idx.checked_sub(1)?)?;
        (t.0 == l).then_some(Position {
            line: t.2 + 1,
            column: t.3 + 1 + (c - t.1),
        })
    }
}

/// 1-based line and column (in UTF-16 units, as editors count) of a byte offset.
pub fn position_of(source: &str, offset: usize) -> Position {
    let offset = offset.min(source.len());
    let before = &source[..offset];
    let line = before.bytes().filter(|&b| b == b'\n').count() as u32 + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].encode_utf16().count() as u32 + 1;
    Position { line, column }
}

/// Strips the types of `source` (a `.ts` file at `path`).
pub fn strip_typescript(path: &Path, source: &str) -> Result<Stripped, Vec<SyntaxError>> {
    if let Some((at, message)) = chant_core::parse_guard::nesting_error(source) {
        return Err(vec![SyntaxError {
            message,
            position: position_of(source, at),
        }]);
    }
    let allocator = Allocator::default();
    let source_type = SourceType::ts().with_module(true);
    let parsed = Parser::new(&allocator, source, source_type).parse();
    if !parsed.diagnostics.is_empty() || parsed.panicked {
        let errors = parsed
            .diagnostics
            .iter()
            .map(|e| {
                let offset = e.labels.first().map_or(0, |l| l.offset() as usize);
                SyntaxError {
                    message: e.message.to_string(),
                    position: position_of(source, offset),
                }
            })
            .collect::<Vec<_>>();
        return Err(if errors.is_empty() {
            vec![SyntaxError {
                message: "could not parse the file".into(),
                position: Position { line: 1, column: 1 },
            }]
        } else {
            errors
        });
    }
    let mut program = parsed.program;
    let semantic = SemanticBuilder::new().with_enum_eval(true).build(&program);
    let scoping = semantic.semantic.into_scoping();
    let options = TransformOptions::default();
    let transformed =
        Transformer::new(&allocator, path, &options).build_with_scoping(scoping, &mut program);
    if let Some(e) = transformed.diagnostics.first() {
        let offset = e.labels.first().map_or(0, |l| l.offset() as usize);
        return Err(vec![SyntaxError {
            message: e.message.to_string(),
            position: position_of(source, offset),
        }]);
    }
    let imports = named_imports(&program);
    let printed = Codegen::new()
        .with_options(CodegenOptions {
            source_map_path: Some(path.to_path_buf()),
            ..CodegenOptions::default()
        })
        .build(&program);
    let tokens = printed
        .map
        .as_ref()
        .map(|m| {
            m.get_tokens()
                .map(|t| {
                    (
                        t.get_dst_line(),
                        t.get_dst_col(),
                        t.get_src_line(),
                        t.get_src_col(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Stripped {
        code: printed.code,
        tokens,
        imports,
    })
}

/// The bindings a stripped program takes from each bare specifier (see [`Stripped::imports`]).
fn named_imports(program: &oxc::ast::ast::Program<'_>) -> Vec<(String, Option<Vec<String>>)> {
    use oxc::ast::ast::{ImportDeclarationSpecifier, Statement};
    let mut out: Vec<(String, Option<Vec<String>>)> = Vec::new();
    let mut add = |source: &str, names: Option<Vec<String>>| {
        if source.starts_with('.') || source.starts_with('/') {
            return;
        }
        match out.iter_mut().find(|(s, _)| s == source) {
            Some((_, have)) => match (have.as_mut(), names) {
                (Some(have), Some(names)) => {
                    for n in names {
                        if !have.contains(&n) {
                            have.push(n);
                        }
                    }
                }
                _ => *have = None,
            },
            None => out.push((source.to_owned(), names)),
        }
    };
    for statement in &program.body {
        match statement {
            Statement::ImportDeclaration(d) => {
                let names = d.specifiers.as_ref().and_then(|specifiers| {
                    specifiers
                        .iter()
                        .map(|s| match s {
                            ImportDeclarationSpecifier::ImportSpecifier(s) => {
                                Some(s.imported.name().to_string())
                            }
                            _ => None,
                        })
                        .collect::<Option<Vec<String>>>()
                });
                add(d.source.value.as_str(), names);
            }
            Statement::ExportFromDeclaration(d) => {
                let names = d
                    .specifiers
                    .iter()
                    .map(|s| s.local.name().to_string())
                    .collect();
                add(d.source.value.as_str(), Some(names));
            }
            Statement::ExportAllDeclaration(d) => add(d.source.value.as_str(), None),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_stripped() {
        let src = "import type { X } from \"./x\";\ninterface A { b: string }\nenum Color { Red, Green }\nexport const a: number = (1 as number);\nexport const c = { lexicons: [\"gitlab\"] } satisfies Record<string, unknown>;\nexport const g = Color.Green;\n";
        let out = strip_typescript(Path::new("a.ts"), src).unwrap();
        assert!(!out.code.contains("interface"));
        assert!(!out.code.contains("satisfies"));
        assert!(!out.code.contains("import type"));
        assert!(out.code.contains("export const a = 1"), "{}", out.code);
    }

    #[test]
    fn named_imports_are_listed_per_bare_specifier() {
        let src = "import type { T } from \"lib\";\nimport { a, b as c } from \"lib\";\nimport { type U, d } from \"lib\";\nimport * as ns from \"whole\";\nimport { e } from \"whole\";\nexport { f } from \"other\";\nimport { g } from \"./local\";\nexport const x: T | U = [a, c, d, ns, e, g] as never;\n";
        let out = strip_typescript(Path::new("a.ts"), src).unwrap();
        assert_eq!(
            out.imports,
            vec![
                (
                    "lib".to_owned(),
                    Some(vec!["a".into(), "b".into(), "d".into()])
                ),
                ("whole".to_owned(), None),
                ("other".to_owned(), Some(vec!["f".into()])),
            ]
        );
    }

    #[test]
    fn syntax_errors_name_the_position() {
        let err =
            strip_typescript(Path::new("a.ts"), "export const a = {\n  b: 1,,\n};\n").unwrap_err();
        assert_eq!(err[0].position.line, 2, "{err:?}");
    }

    #[test]
    fn positions_map_back_to_the_source() {
        let src = "type T = { a: string };\n\nexport const x: T = { a: \"1\" };\nthrow new Error(\"boom\");\n";
        let out = strip_typescript(Path::new("a.ts"), src).unwrap();
        let gen_line = out.code.lines().position(|l| l.contains("throw")).unwrap() as u32 + 1;
        let col = out
            .code
            .lines()
            .nth(gen_line as usize - 1)
            .unwrap()
            .find("throw")
            .unwrap() as u32
            + 1;
        assert_eq!(
            out.original(gen_line, col),
            Some(Position { line: 4, column: 1 })
        );
    }

    #[test]
    fn columns_count_utf16_units() {
        assert_eq!(position_of("é\nab😀c", 9), Position { line: 2, column: 5 });
    }
}
