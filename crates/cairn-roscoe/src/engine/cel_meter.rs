//! The budget a condition's evaluation runs on.
//!
//! CEL counts nothing itself, and a few nested comprehensions over short lists (`l.all(a, l.all(b, …))`) cost time
//! exponential in their nesting: six levels over 14 elements are 7.5 million steps. So before a condition is
//! evaluated, [`instrument`] passes every comprehension's range through a function of the meter's, which counts the
//! elements that loop may visit. Past [`MAX_STEPS`] in all, or once the deadline has passed, it fails, and so does
//! every loop around it at its next element; the evaluation then ends with the meter's reason, whatever the
//! expression made of the failure (`||` and `&&` may absorb an error).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use cel::common::ast::{EntryExpr, Expr};
use cel::common::value::CowVal;
use cel::ExecutionError;
use cel::{Context, FunctionContext, IdedExpr};

/// The most range elements one evaluation may visit.
pub(super) const MAX_STEPS: u64 = 100_000;

/// The function every range passes through: CEL source cannot spell the name, so only [`instrument`] calls it.
const METER: &str = "@meter";

/// The steps one evaluation has taken, when it must end, and why it ended early.
pub(super) struct Meter {
    deadline: Option<Instant>,
    spent: Mutex<Spent>,
}

#[derive(Default)]
struct Spent {
    steps: u64,
    stopped: Option<String>,
}

impl Meter {
    pub(super) fn new(deadline: Option<Instant>) -> Arc<Meter> {
        Arc::new(Meter { deadline, spent: Mutex::default() })
    }

    /// Declares the meter's function in `context`.
    pub(super) fn install(self: &Arc<Self>, context: &mut Context<'_, '_>) {
        let meter = Arc::clone(self);
        type Call = dyn for<'c, 'a> Fn(&mut FunctionContext<'c, 'a>) -> Result<CowVal<'c, 'a>, ExecutionError>
            + Send
            + Sync;
        let function: Box<Call> = Box::new(move |call: &mut FunctionContext<'_, '_>| {
            let range = call.args.pop().ok_or_else(|| call.error("the meter takes the range"))?;
            let size = range.as_ref().as_sizer().map_or(0, |s| u64::try_from(*s.size().inner()).unwrap_or(0));
            meter.count(size).map_err(|reason| call.error(reason))?;
            Ok(range)
        });
        context.add_function(METER, function).expect("the meter's name is no standard function's");
    }

    /// `elements` more steps; an error once the budget or the time is spent.
    fn count(&self, elements: u64) -> Result<(), String> {
        let mut spent = self.spent.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(reason) = spent.stopped.as_ref() {
            return Err(reason.clone());
        }
        spent.steps = spent.steps.saturating_add(elements);
        let reason = if spent.steps > MAX_STEPS {
            format!(
                "it would take more than {MAX_STEPS} steps (its comprehensions visit that many elements in all); \
                 nest fewer all/exists/map/filter calls or give them shorter lists"
            )
        } else if self.deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            "the run's time ran out while it was being evaluated (test_workflow's timeout_ms)".to_owned()
        } else {
            return Ok(());
        };
        spent.stopped = Some(reason.clone());
        Err(reason)
    }

    /// Why the evaluation was stopped, if it was.
    pub(super) fn stopped(&self) -> Option<String> {
        self.spent.lock().unwrap_or_else(|e| e.into_inner()).stopped.clone()
    }
}

/// Passes the range of every comprehension in `expr` through the meter's function.
pub(super) fn instrument(expr: &mut IdedExpr) {
    match &mut expr.expr {
        Expr::Call(call) => {
            if let Some(target) = call.target.as_deref_mut() {
                instrument(target);
            }
            call.args.iter_mut().for_each(instrument);
        }
        Expr::Comprehension(c) => {
            for part in [&mut c.iter_range, &mut c.accu_init, &mut c.loop_cond, &mut c.loop_step, &mut c.result] {
                instrument(part);
            }
            let range = std::mem::take(&mut c.iter_range);
            let id = range.id;
            let call = cel::common::ast::CallExpr { func_name: METER.to_owned(), target: None, args: vec![range] };
            c.iter_range = IdedExpr { id, expr: Expr::Call(call) };
        }
        Expr::List(list) => list.elements.iter_mut().for_each(instrument),
        Expr::Map(map) => map.entries.iter_mut().for_each(|entry| entry_parts(&mut entry.expr)),
        Expr::Struct(object) => object.entries.iter_mut().for_each(|entry| entry_parts(&mut entry.expr)),
        Expr::Select(select) => instrument(&mut select.operand),
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}

fn entry_parts(entry: &mut EntryExpr) {
    match entry {
        EntryExpr::StructField(field) => instrument(&mut field.value),
        EntryExpr::MapEntry(entry) => {
            instrument(&mut entry.key);
            instrument(&mut entry.value);
        }
    }
}
