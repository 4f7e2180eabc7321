//! Condition expressions (CEL, §7.2): parse them and list the references they make.
//!
//! Only parsing happens here; evaluation belongs to the engine. A reference is the longest `a.b.c` select chain
//! rooted at a free identifier (comprehension variables such as `x` in `l.exists(x, x > 1)` are bound, not
//! references). A reference inside `has(…)` counts as having a fallback: it tests for presence.
//!
//! CEL's parser recurses for every bracket and every operator of a chain, with large frames (a few levels of `(`
//! exhaust a 2 MiB thread stack in a debug build, a few hundred in a release build), and a stack overflow aborts the
//! whole server. So an expression is refused when it is longer than [`MAX_BYTES`] or nests brackets deeper than
//! [`MAX_NESTING`] ([`check_size`]), and CEL — parsing here, evaluating in the engine — runs on a thread of its own
//! whose stack holds any expression those limits let through ([`on_cel_stack`]).

use cel::IdedExpr;
use cel::common::ast::{EntryExpr, Expr};

use super::template::{Reference, Segment};

/// One reference found in an expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ExprRef {
    pub(crate) reference: Reference,
    pub(crate) has_fallback: bool,
}

/// The longest expression read, in bytes.
pub(crate) const MAX_BYTES: usize = 4096;

/// The deepest nesting of `(`, `[` and `{` read (counted everywhere, string literals included).
pub(crate) const MAX_NESTING: usize = 32;

/// The stack CEL runs on: ample for an expression within the limits, even in a debug build.
const CEL_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Refuses an expression longer than [`MAX_BYTES`] or nested deeper than [`MAX_NESTING`], saying which.
pub(crate) fn check_size(source: &str) -> Result<(), String> {
    if source.len() > MAX_BYTES {
        return Err(format!(
            "the expression is {} bytes, more than the {MAX_BYTES} allowed; split it over several conditions",
            source.len()
        ));
    }
    let mut depth = 0usize;
    for b in source.bytes() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(format!(
                        "the expression nests brackets more than {MAX_NESTING} deep; simplify it"
                    ));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Runs `work` (CEL parsing or evaluation) on a thread with a stack of its own (see the module documentation).
pub(crate) fn on_cel_stack<T: Send>(work: impl FnOnce() -> T + Send) -> Result<T, String> {
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("cel".into())
            .stack_size(CEL_STACK_BYTES)
            .spawn_scoped(scope, work)
            .map_err(|e| format!("no thread could be started to read the expression: {e}"))?;
        Ok(handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    })
}

/// Parses a CEL expression and returns its references, or the parser's message.
pub(crate) fn references(source: &str) -> Result<Vec<ExprRef>, String> {
    check_size(source)?;
    on_cel_stack(|| {
        let expr = cel::parser::Parser::new()
            .parse(source)
            .map_err(|e| e.to_string())?;
        let mut found = Vec::new();
        walk(&expr, &mut Vec::new(), false, &mut found);
        Ok(found)
    })?
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

    #[test]
    fn long_or_deep_expressions_are_refused_with_a_clear_error() {
        let deep = format!("{}1{}", "(".repeat(MAX_NESTING + 1), ")".repeat(MAX_NESTING + 1));
        assert!(references(&deep).unwrap_err().contains("nests brackets more than 32 deep"));
        let nested = format!("{}1{}", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
        assert_eq!(references(&nested), Ok(Vec::new()), "the deepest nesting allowed is read");
        let long = format!("a{}", " + a".repeat(MAX_BYTES / 4));
        assert!(references(&long).unwrap_err().contains("bytes, more than the 4096 allowed"));
        let chain = format!("a{}", " + a".repeat(MAX_BYTES / 4 - 1));
        assert_eq!(references(&chain).map(|r| r.len()), Ok(MAX_BYTES / 4), "the longest chain allowed is read");
    }

    mod hostile {
        use proptest::prelude::*;

        use crate::hostile_input::{bounded, corpus_strings, mutated, survives_hostile_texts};

        fn parse(text: &str) {
            let _ = super::super::references(text);
        }

        #[test]
        fn hostile_texts_neither_crash_nor_hang_the_parser() {
            survives_hostile_texts("CEL parsing", parse);
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(200))]

            #[test]
            fn mutated_conditions_never_panic_or_hang(text in mutated(corpus_strings().1)) {
                bounded("CEL parsing", text, parse);
            }

            #[test]
            fn random_conditions_never_panic_or_hang(text in "[()\\[\\]{}a-c0-9 .,!?:<>=&|+*/%'\"-]{0,300}") {
                bounded("CEL parsing", text, parse);
            }
        }
    }
}
