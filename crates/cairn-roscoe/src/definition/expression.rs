//! Condition expressions (CEL, §7.2): parse them and list the references they make.
//!
//! Only parsing happens here; evaluation belongs to the engine. A reference is the longest `a.b.c` select chain
//! rooted at a free identifier (comprehension variables such as `x` in `l.exists(x, x > 1)` are bound, not
//! references). A reference inside `has(…)` counts as having a fallback: it tests for presence.

use cel::IdedExpr;
use cel::common::ast::{EntryExpr, Expr};

use super::template::{Reference, Segment};

/// One reference found in an expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ExprRef {
    pub(crate) reference: Reference,
    pub(crate) has_fallback: bool,
}

/// Parses a CEL expression and returns its references, or the parser's message.
pub(crate) fn references(source: &str) -> Result<Vec<ExprRef>, String> {
    let expr = cel::parser::Parser::new()
        .parse(source)
        .map_err(|e| e.to_string())?;
    let mut found = Vec::new();
    walk(&expr, &mut Vec::new(), false, &mut found);
    Ok(found)
}

fn walk(e: &IdedExpr, bound: &mut Vec<String>, guarded: bool, found: &mut Vec<ExprRef>) {
    match &e.expr {
        Expr::Ident(_) | Expr::Select(_) => {
            if let Some(reference) = chain(e) {
                if !bound.contains(&reference.root) {
                    found.push(ExprRef {
                        reference,
                        has_fallback: guarded || is_test(e),
                    });
                }
                return;
            }
            if let Expr::Select(select) = &e.expr {
                walk(&select.operand, bound, guarded, found);
            }
        }
        Expr::Call(call) => {
            if let Some(target) = &call.target {
                walk(target, bound, guarded, found);
            }
            for arg in &call.args {
                walk(arg, bound, guarded, found);
            }
        }
        Expr::Comprehension(c) => {
            walk(&c.iter_range, bound, guarded, found);
            let depth = bound.len();
            bound.push(c.iter_var.clone());
            if let Some(v) = &c.iter_var2 {
                bound.push(v.clone());
            }
            bound.push(c.accu_var.clone());
            for part in [&c.accu_init, &c.loop_cond, &c.loop_step, &c.result] {
                walk(part, bound, guarded, found);
            }
            bound.truncate(depth);
        }
        Expr::List(list) => list
            .elements
            .iter()
            .for_each(|x| walk(x, bound, guarded, found)),
        Expr::Map(map) => {
            for entry in &map.entries {
                if let EntryExpr::MapEntry(m) = &entry.expr {
                    walk(&m.key, bound, guarded, found);
                    walk(&m.value, bound, guarded, found);
                }
            }
        }
        Expr::Struct(s) => {
            for entry in &s.entries {
                if let EntryExpr::StructField(f) = &entry.expr {
                    walk(&f.value, bound, guarded, found);
                }
            }
        }
        Expr::Literal(_) | Expr::Unspecified => {}
    }
}

fn is_test(e: &IdedExpr) -> bool {
    matches!(&e.expr, Expr::Select(s) if s.test)
}

/// `a.b.c` (and the `has(a.b.c)` test form) as a reference; `None` for anything else (calls, indexes, …).
fn chain(e: &IdedExpr) -> Option<Reference> {
    match &e.expr {
        Expr::Ident(name) => Some(Reference {
            root: name.clone(),
            path: Vec::new(),
        }),
        Expr::Select(select) => {
            let mut reference = chain(&select.operand)?;
            reference.path.push(Segment::Field(select.field.clone()));
            Some(reference)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(source: &str) -> Vec<(String, bool)> {
        references(source)
            .unwrap()
            .into_iter()
            .map(|r| (r.reference.to_string(), r.has_fallback))
            .collect()
    }

    #[test]
    fn finds_select_chains() {
        assert_eq!(
            check("review.verdict == \"pass\" && plan.score > 0.8"),
            [
                ("review.verdict".into(), false),
                ("plan.score".into(), false)
            ]
        );
        assert_eq!(
            check("size(tests.stdout) > 0 || input.strict"),
            [
                ("tests.stdout".into(), false),
                ("input.strict".into(), false)
            ]
        );
    }

    #[test]
    fn has_is_a_fallback_and_comprehension_vars_are_bound() {
        assert_eq!(check("has(fix.patch)"), [("fix.patch".into(), true)]);
        assert_eq!(
            check("review.tags.exists(t, t == \"x\")"),
            [("review.tags".into(), false)]
        );
    }

    #[test]
    fn syntax_errors_are_reported() {
        assert!(references("a ==").is_err());
        assert!(references("a.b &&& c").is_err());
    }
}
