//! The control-flow graph of a workflow and its dominators (§4.5).
//!
//! Vertices are node indexes; an edge u→v exists for each transition of u that targets node v (`$end` and
//! `$fail` are not vertices). Node A *dominates* B when every path from the start to B passes through A.
//! Immediate dominators come from the Cooper–Harvey–Kennedy iterative algorithm over reverse postorder.

/// A directed graph over `0..len` with a start vertex, and its dominator tree.
#[derive(Clone, Debug)]
pub struct Dominators {
    succ: Vec<Vec<usize>>,
    /// Immediate dominator of each vertex; the start is its own; `None` when unreachable.
    idom: Vec<Option<usize>>,
    start: usize,
}

impl Dominators {
    /// Computes dominators of the graph with successor lists `succ`, from `start`.
    pub fn new(succ: Vec<Vec<usize>>, start: usize) -> Self {
        let n = succ.len();
        // Reverse postorder by an explicit-stack DFS.
        let mut order = Vec::with_capacity(n);
        let mut seen = vec![false; n];
        let mut stack = vec![(start, 0usize)];
        seen[start] = true;
        while let Some((v, i)) = stack.pop() {
            if let Some(&w) = succ[v].get(i) {
                stack.push((v, i + 1));
                if !seen[w] {
                    seen[w] = true;
                    stack.push((w, 0));
                }
            } else {
                order.push(v);
            }
        }
        order.reverse();
        let mut rpo = vec![usize::MAX; n];
        for (i, &v) in order.iter().enumerate() {
            rpo[v] = i;
        }
        let mut pred = vec![Vec::new(); n];
        for (u, targets) in succ.iter().enumerate() {
            for &v in targets {
                pred[v].push(u);
            }
        }
        let mut idom: Vec<Option<usize>> = vec![None; n];
        idom[start] = Some(start);
        let mut changed = true;
        while changed {
            changed = false;
            for &b in order.iter().skip(1) {
                let mut new_idom: Option<usize> = None;
                for &p in &pred[b] {
                    if idom[p].is_none() {
                        continue;
                    }
                    new_idom = Some(match new_idom {
                        None => p,
                        Some(cur) => intersect(&idom, &rpo, p, cur),
                    });
                }
                if new_idom.is_some() && idom[b] != new_idom {
                    idom[b] = new_idom;
                    changed = true;
                }
            }
        }
        Dominators { succ, idom, start }
    }

    /// Whether `v` is reachable from the start.
    pub fn reachable(&self, v: usize) -> bool {
        self.idom[v].is_some()
    }

    /// Whether `a` dominates `b` (every vertex dominates itself). `false` when `b` is unreachable.
    pub fn dominates(&self, a: usize, b: usize) -> bool {
        if !self.reachable(b) {
            return false;
        }
        let mut v = b;
        loop {
            if v == a {
                return true;
            }
            if v == self.start {
                return false;
            }
            v = self.idom[v].expect("reachable vertices have an immediate dominator");
        }
    }

    /// Whether `a` dominates `b` and differs from it.
    pub fn strictly_dominates(&self, a: usize, b: usize) -> bool {
        a != b && self.dominates(a, b)
    }

    /// Successors of `v`.
    pub fn successors(&self, v: usize) -> &[usize] {
        &self.succ[v]
    }
}

fn intersect(idom: &[Option<usize>], rpo: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while rpo[a] > rpo[b] {
            a = idom[a].expect("processed");
        }
        while rpo[b] > rpo[a] {
            b = idom[b].expect("processed");
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Brute force: `a` dominates `b` iff `b` is reachable and unreachable once `a` is removed (or a == b).
    fn brute(succ: &[Vec<usize>], start: usize, a: usize, b: usize) -> bool {
        let reach = |skip: Option<usize>| {
            let mut seen = vec![false; succ.len()];
            if Some(start) == skip {
                return seen;
            }
            let mut stack = vec![start];
            seen[start] = true;
            while let Some(v) = stack.pop() {
                for &w in &succ[v] {
                    if !seen[w] && Some(w) != skip {
                        seen[w] = true;
                        stack.push(w);
                    }
                }
            }
            seen
        };
        reach(None)[b] && (a == b || !reach(Some(a))[b])
    }

    #[test]
    fn diamond() {
        // 0 -> 1 | 2 -> 3
        let d = Dominators::new(vec![vec![1, 2], vec![3], vec![3], vec![]], 0);
        assert!(d.strictly_dominates(0, 3));
        assert!(!d.dominates(1, 3));
        assert!(!d.dominates(2, 3));
        assert!(d.dominates(3, 3));
    }

    #[test]
    fn loops_and_unreachable() {
        // 0 -> 1 -> 2 -> 1, 2 -> 3; 4 unreachable
        let d = Dominators::new(vec![vec![1], vec![2], vec![1, 3], vec![], vec![3]], 0);
        assert!(d.dominates(1, 3) && d.dominates(2, 3));
        assert!(!d.reachable(4) && !d.dominates(0, 4));
    }

    fn arb_graph() -> impl Strategy<Value = Vec<Vec<usize>>> {
        (1usize..8).prop_flat_map(|n| prop::collection::vec(prop::collection::vec(0..n, 0..4), n))
    }

    proptest! {
        #[test]
        fn agrees_with_brute_force(succ in arb_graph()) {
            let d = Dominators::new(succ.clone(), 0);
            for a in 0..succ.len() {
                for b in 0..succ.len() {
                    prop_assert_eq!(d.dominates(a, b), brute(&succ, 0, a, b), "a={} b={} {:?}", a, b, succ);
                }
            }
        }
    }
}
