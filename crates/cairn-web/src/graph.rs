//! The workflow graph as server-rendered SVG: the layered layout of the `layout-rs` crate (Graphviz's `dot`
//! approach: ranks, crossing reduction, long edges through virtual nodes, loops turned around), drawn here with
//! cairn's own markup so every node is a link (`#node-<id>`, the node's details on a run page) with a status class
//! the stylesheet colours, the current node marked, and `$end` / `$fail` drawn as terminal circles (a node without
//! transitions, which ends the run, has an edge to `$end`). Every edge points from its source to its target, loops
//! included (the layout turns a loop's edge around to rank the nodes; its arrowhead goes back to the target's end),
//! and on a run page the transitions the run took are marked `taken`.
//!
//! Why SVG from the server: the pages work without JavaScript, and the live run page swaps in re-rendered HTML over
//! SSE, so the picture has to come with the HTML; the SVG needs no script and no inline style (the CSP forbids
//! both). Parallel transitions between two nodes are drawn as one edge labelled with every event.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use cairn_roscoe::diagram::Diagram;
use layout::core::base::Orientation;
use layout::core::format::{ClipHandle, RenderBackend};
use layout::core::geometry::Point;
use layout::core::style::StyleAttr;
use layout::std_shapes::shapes::{Arrow, Element, ShapeKind};
use layout::topo::layout::VisualGraph;

/// Pixels per character of a node label (the stylesheet's 13 px system font, generously).
const CHAR_WIDTH: f64 = 7.6;
/// The height of a node box: its label and its type.
const NODE_HEIGHT: f64 = 44.0;
/// The diameter of a terminal circle.
const TERMINAL: f64 = 40.0;
/// Room around the drawing.
const MARGIN: f64 = 8.0;

/// A workflow drawn for a page: the nodes (for lists beside the picture) and the SVG.
#[derive(Debug, Clone, Default)]
pub(crate) struct Graph {
    /// The nodes, in file order.
    pub(crate) nodes: Vec<GraphNode>,
    /// The transitions: `(from, event, to)`.
    pub(crate) edges: Vec<(String, String, String)>,
    /// The node a run waits at, marked in the drawing.
    pub(crate) current: Option<String>,
    /// The transitions a run took, `(from, to)`, marked in the drawing.
    pub(crate) taken: BTreeSet<(String, String)>,
}

/// One node of a [`Graph`].
#[derive(Debug, Clone)]
pub(crate) struct GraphNode {
    /// The node id.
    pub(crate) id: String,
    /// Its label.
    pub(crate) label: String,
    /// Its type.
    pub(crate) kind: String,
    /// Its status in the run shown ("" when none).
    pub(crate) status: String,
}

impl GraphNode {
    /// The line under the label: the type, the status in the run shown, and `now` on the current step — in words,
    /// so the status does not rest on colour alone (it is also the link's accessible name, with the label).
    fn caption(&self, current: bool) -> String {
        let mut caption = self.kind.clone();
        if !self.status.is_empty() {
            caption = format!("{caption} · {}", self.status);
        }
        if current {
            caption.push_str(" · now");
        }
        caption
    }
}

impl From<Diagram> for Graph {
    fn from(diagram: Diagram) -> Graph {
        let nodes = diagram
            .nodes
            .iter()
            .map(|n| GraphNode {
                id: n.id.clone(),
                label: n.label.clone(),
                kind: serde_json::to_value(n.kind).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default(),
                status: n.status.map(|s| s.as_str().to_owned()).unwrap_or_default(),
            })
            .collect();
        let mut edges: Vec<(String, String, String)> =
            diagram.edges.into_iter().map(|e| (e.from, e.event, e.to)).collect();
        // A node without transitions ends the run as `$end` does.
        for node in &diagram.nodes {
            if !edges.iter().any(|(from, _, _)| *from == node.id) {
                edges.push((node.id.clone(), String::new(), "$end".to_owned()));
            }
        }
        Graph { nodes, edges, current: None, taken: BTreeSet::new() }
    }
}

impl Graph {
    /// Marks the transitions a run took: each node run that ended with an event took the edge of that event (a node
    /// without transitions, its edge to `$end`).
    pub(crate) fn mark_taken<'a>(&mut self, visits: impl IntoIterator<Item = (&'a str, &'a str)>) {
        for (node, event) in visits {
            let taken = self.edges.iter().find(|(from, on, _)| from == node && (on == event || on.is_empty()));
            if let Some((from, _, to)) = taken {
                self.taken.insert((from.clone(), to.clone()));
            }
        }
    }
}

/// An edge as drawn: its path, which of the graph's node pairs it joins, and whether the layout turned it around.
struct EdgePath {
    d: String,
    pair: Option<usize>,
    reversed: bool,
}

/// What the layout drew, collected to be written as cairn's markup.
#[derive(Default)]
struct Canvas {
    /// Top-left corner and size of each node box or terminal circle, by its id.
    shapes: BTreeMap<String, (Point, Point)>,
    /// Edge paths.
    paths: Vec<EdgePath>,
    /// Edge labels: where, and the text.
    labels: Vec<(Point, String)>,
    /// The drawing's extent.
    min: Option<Point>,
    max: Option<Point>,
}

impl Canvas {
    fn grow(&mut self, at: Point) {
        let min = self.min.get_or_insert(at);
        *min = Point::new(min.x.min(at.x), min.y.min(at.y));
        let max = self.max.get_or_insert(at);
        *max = Point::new(max.x.max(at.x), max.y.max(at.y));
    }

    fn inside_a_shape(&self, at: Point) -> bool {
        self.shapes.values().any(|(xy, size)| at.x >= xy.x && at.x <= xy.x + size.x && at.y >= xy.y && at.y <= xy.y + size.y)
    }
}

impl RenderBackend for Canvas {
    fn draw_rect(&mut self, xy: Point, size: Point, _look: &StyleAttr, properties: Option<String>, _clip: Option<ClipHandle>) {
        if let Some(id) = properties {
            self.grow(xy);
            self.grow(Point::new(xy.x + size.x, xy.y + size.y));
            self.shapes.insert(id, (xy, size));
        }
    }

    fn draw_line(&mut self, _start: Point, _stop: Point, _look: &StyleAttr, _properties: Option<String>) {}

    fn draw_circle(&mut self, xy: Point, size: Point, _look: &StyleAttr, properties: Option<String>) {
        if let Some(id) = properties {
            let corner = Point::new(xy.x - size.x / 2.0, xy.y - size.y / 2.0);
            self.grow(corner);
            self.grow(Point::new(xy.x + size.x / 2.0, xy.y + size.y / 2.0));
            self.shapes.insert(id, (corner, size));
        }
    }

    fn draw_text(&mut self, xy: Point, text: &str, _look: &StyleAttr) {
        // Node labels are written with their node; the other texts are the labels of edges.
        if !self.inside_a_shape(xy) {
            let width = text.chars().count() as f64 * CHAR_WIDTH / 2.0;
            self.grow(Point::new(xy.x - width, xy.y - 8.0));
            self.grow(Point::new(xy.x + width, xy.y + 8.0));
            self.labels.push((xy, text.to_owned()));
        }
    }

    fn draw_arrow(
        &mut self,
        path: &[(Point, Point)],
        _dashed: bool,
        head: (bool, bool),
        _look: &StyleAttr,
        properties: Option<String>,
        _text: &str,
    ) {
        // layout-rs gives the start and its control point, then for each later point its control point and the point.
        let Some(((start, start_control), rest)) = path.split_first().map(|(f, r)| (*f, r)) else { return };
        let Some(((control, point), rest)) = rest.split_first().map(|(f, r)| (*f, r)) else { return };
        for (a, b) in path {
            self.grow(*a);
            self.grow(*b);
        }
        let mut d = format!(
            "M{:.1} {:.1} C{:.1} {:.1} {:.1} {:.1} {:.1} {:.1}",
            start.x, start.y, start_control.x, start_control.y, control.x, control.y, point.x, point.y
        );
        for (control, point) in rest {
            let _ = write!(d, " S{:.1} {:.1} {:.1} {:.1}", control.x, control.y, point.x, point.y);
        }
        // A loop's edge turned around for the ranking has its head at the path's start.
        let reversed = head.0 && !head.1;
        self.paths.push(EdgePath { d, pair: properties.and_then(|p| p.parse().ok()), reversed });
    }

    fn create_clip(&mut self, _xy: Point, _size: Point, _rounded_px: usize) -> ClipHandle {
        0
    }
}

/// An arrowhead marker (drawn the other way round at a path's start).
fn marker(id: &str, class: &str) -> String {
    format!(
        "<marker id=\"{id}\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" \
         orient=\"auto-start-reverse\"><path d=\"M0 0 L10 5 L0 10 z\" class=\"{class}\"/></marker>"
    )
}

/// `text` escaped for an attribute or element content.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The terminal a target names (`$end`, `$fail`), if it is one.
fn terminal(target: &str) -> Option<&'static str> {
    match target {
        "$end" => Some("end"),
        "$fail" => Some("fail"),
        _ => None,
    }
}

impl Graph {
    /// The drawing as an `<svg>` element (empty for a graph without nodes).
    pub(crate) fn svg(&self) -> String {
        if self.nodes.is_empty() {
            return String::new();
        }
        let pairs = self.pairs();
        let canvas = self.layout(&pairs);
        let (Some(min), Some(max)) = (canvas.min, canvas.max) else { return String::new() };
        let (width, height) = (max.x - min.x + 2.0 * MARGIN, max.y - min.y + 2.0 * MARGIN);
        let mut svg = format!(
            "<svg class=\"graph-svg\" xmlns=\"http://www.w3.org/2000/svg\" role=\"group\" aria-label=\"Workflow graph\" \
             width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"{:.1} {:.1} {width:.1} {height:.1}\">\
             <defs>{}{}</defs>",
            min.x - MARGIN,
            min.y - MARGIN,
            marker("arrowhead", "arrowhead"),
            marker("arrowhead-taken", "arrowhead taken"),
        );
        for path in &canvas.paths {
            let pair = path.pair.and_then(|i| pairs.get(i));
            let taken = pair.is_some_and(|(pair, _)| self.taken.contains(pair));
            let (class, head) = if taken { ("edge taken", "arrowhead-taken") } else { ("edge", "arrowhead") };
            let ends = pair.map_or_else(String::new, |((from, to), _)| {
                format!(" data-from=\"{}\" data-to=\"{}\"", escape(from), escape(to))
            });
            let at = if path.reversed { "marker-start" } else { "marker-end" };
            let _ = write!(svg, "<path class=\"{class}\"{ends} d=\"{}\" {at}=\"url(#{head})\"/>", path.d);
        }
        for (at, text) in &canvas.labels {
            let _ = write!(
                svg,
                "<text class=\"edge-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" dominant-baseline=\"middle\">{}</text>",
                at.x,
                at.y,
                escape(text)
            );
        }
        for node in &self.nodes {
            let Some((xy, size)) = canvas.shapes.get(&node.id) else { continue };
            let current = self.current.as_deref() == Some(node.id.as_str());
            let status = if node.status.is_empty() { "none" } else { node.status.as_str() };
            let _ = write!(
                svg,
                "<a href=\"#node-{id}\"><g class=\"gnode status-{status}{current}\" data-node=\"{id}\" \
                 data-status=\"{status}\"><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"6\"/>\
                 <text class=\"label\" x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{label}</text>\
                 <text class=\"kind\" x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{kind}</text></g></a>",
                xy.x,
                xy.y,
                size.x,
                size.y,
                xy.y + 18.0,
                xy.y + 35.0,
                id = escape(&node.id),
                current = if current { " current" } else { "" },
                cx = xy.x + size.x / 2.0,
                label = escape(&node.label),
                kind = escape(&node.caption(current)),
            );
        }
        for (id, text) in [("$end", "end"), ("$fail", "fail")] {
            let Some((xy, size)) = canvas.shapes.get(id) else { continue };
            let _ = write!(
                svg,
                "<g class=\"terminal terminal-{text}\"><circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"{:.1}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" dominant-baseline=\"middle\">{text}</text></g>",
                xy.x + size.x / 2.0,
                xy.y + size.y / 2.0,
                size.x / 2.0,
                xy.x + size.x / 2.0,
                xy.y + size.y / 2.0,
            );
        }
        svg.push_str("</svg>");
        svg
    }

    /// One edge per pair of nodes, `(from, to)`, in the order of their first transition, with every event that takes
    /// it.
    fn pairs(&self) -> Vec<((String, String), Vec<String>)> {
        let mut pairs: Vec<((String, String), Vec<String>)> = Vec::new();
        for (from, event, to) in &self.edges {
            match pairs.iter_mut().find(|(pair, _)| pair.0 == *from && pair.1 == *to) {
                Some((_, events)) => events.push(event.clone()),
                None => pairs.push(((from.clone(), to.clone()), vec![event.clone()])),
            }
        }
        pairs
    }

    /// Lays the graph out with one edge per pair of `pairs` and collects what the layout draws.
    fn layout(&self, pairs: &[((String, String), Vec<String>)]) -> Canvas {
        let orientation = Orientation::TopToBottom;
        let mut graph = VisualGraph::new(orientation);
        let mut handles = BTreeMap::new();
        for node in &self.nodes {
            let current = self.current.as_deref() == Some(node.id.as_str());
            let chars = node.label.chars().count().max(node.caption(current).chars().count()) as f64;
            let size = Point::new(chars * CHAR_WIDTH + 24.0, NODE_HEIGHT);
            let element = Element::create_with_properties(
                ShapeKind::new_box(&node.label),
                StyleAttr::simple(),
                orientation,
                size,
                node.id.clone(),
            );
            handles.insert(node.id.clone(), graph.add_node(element));
        }
        for (index, ((from, to), events)) in pairs.iter().enumerate() {
            let Some(&source) = handles.get(from) else { continue };
            let target = match (handles.get(to), terminal(to)) {
                (Some(&handle), _) => handle,
                (None, Some(name)) => *handles.entry(to.clone()).or_insert_with(|| {
                    graph.add_node(Element::create_with_properties(
                        ShapeKind::new_circle(name),
                        StyleAttr::simple(),
                        orientation,
                        Point::splat(TERMINAL),
                        to.clone(),
                    ))
                }),
                // A target that names no node: validation reports it; the drawing leaves the edge out.
                (None, None) => continue,
            };
            let label: Vec<&str> = events.iter().map(String::as_str).filter(|e| !e.is_empty()).collect();
            graph.add_edge(Arrow::simple_with_properties(&label.join(" / "), index.to_string()), source, target);
        }
        let mut canvas = Canvas::default();
        graph.do_it(false, false, false, &mut canvas);
        canvas
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, status: &str) -> GraphNode {
        GraphNode { id: id.into(), label: id.to_uppercase(), kind: "ai_agent".into(), status: status.into() }
    }

    fn edge(from: &str, event: &str, to: &str) -> (String, String, String) {
        (from.into(), event.into(), to.into())
    }

    fn rects(svg: &str) -> Vec<(f64, f64, f64, f64)> {
        svg.split("<rect ")
            .skip(1)
            .map(|r| {
                let attr = |name: &str| -> f64 {
                    r.split(&format!("{name}=\"")).nth(1).unwrap().split('"').next().unwrap().parse().unwrap()
                };
                (attr("x"), attr("y"), attr("width"), attr("height"))
            })
            .collect()
    }

    fn overlap(a: (f64, f64, f64, f64), b: (f64, f64, f64, f64)) -> bool {
        a.0 < b.0 + b.2 && b.0 < a.0 + a.2 && a.1 < b.1 + b.3 && b.1 < a.1 + a.3
    }

    #[test]
    fn nodes_edges_labels_terminals_and_the_current_node_are_drawn() {
        let graph = Graph {
            nodes: vec![node("draft", "completed"), node("review", "paused"), node("fix", "")],
            edges: vec![
                edge("draft", "success", "review"),
                edge("review", "approve", "$end"),
                edge("review", "reject", "fix"),
                edge("review", "abandon", "$fail"),
                edge("fix", "success", "review"),
                edge("fix", "retry", "review"),
            ],
            current: Some("review".into()),
            taken: BTreeSet::new(),
        };
        let svg = graph.svg();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"), "{svg}");
        assert!(svg.contains(r#"class="gnode status-completed" data-node="draft""#), "{svg}");
        assert!(svg.contains(r#"class="gnode status-paused current" data-node="review""#), "{svg}");
        assert!(svg.contains(r#"class="gnode status-none" data-node="fix""#), "{svg}");
        assert!(svg.contains(r##"href="#node-review""##));
        assert!(svg.contains("terminal-end") && svg.contains("terminal-fail"), "{svg}");
        for label in ["success", "approve", "reject", "abandon", "success / retry"] {
            assert!(svg.contains(&format!(">{label}</text>")), "edge label {label}: {svg}");
        }
        assert_eq!(svg.matches("class=\"edge\"").count(), 5, "parallel transitions share one edge: {svg}");
        assert!(!svg.contains("style="), "no inline style (the CSP forbids it)");
    }

    #[test]
    fn fifty_nodes_with_loops_lay_out_without_overlap() {
        let nodes: Vec<GraphNode> = (0..50).map(|i| node(&format!("step{i}"), "")).collect();
        let mut edges = Vec::new();
        for i in 0..49 {
            edges.push(edge(&format!("step{i}"), "success", &format!("step{}", i + 1)));
            if i % 7 == 6 {
                edges.push(edge(&format!("step{i}"), "failure", &format!("step{}", i - 5)));
                edges.push(edge(&format!("step{i}"), "again", &format!("step{i}")));
            }
        }
        edges.push(edge("step49", "success", "$end"));
        let svg = Graph { nodes, edges, ..Graph::default() }.svg();
        let boxes = rects(&svg);
        assert_eq!(boxes.len(), 50, "every node is drawn once");
        for (i, a) in boxes.iter().enumerate() {
            for b in &boxes[i + 1..] {
                assert!(!overlap(*a, *b), "{a:?} overlaps {b:?}");
            }
        }
    }

    /// The box of node `id` in `svg`: x, y, width, height.
    fn rect_of(svg: &str, id: &str) -> (f64, f64, f64, f64) {
        let at = svg.find(&format!("data-node=\"{id}\"")).unwrap();
        rects(&svg[at..])[0]
    }

    /// Where the arrowhead of the edge `from` → `to` is drawn: the end of its path, or its start when the layout
    /// turned it around (`marker-start`).
    fn head_of(svg: &str, from: &str, to: &str) -> (f64, f64) {
        let ends = format!("data-from=\"{from}\" data-to=\"{to}\"");
        let tag = svg.split("<path class=\"edge").find(|p| p.contains(&ends));
        let tag = tag.unwrap_or_else(|| panic!("an edge {from} → {to}: {svg}"));
        let d = tag.split("d=\"").nth(1).unwrap().split('"').next().unwrap();
        let numbers: Vec<f64> =
            d.split(|c: char| c.is_ascii_alphabetic() || c == ' ').filter_map(|n| n.parse().ok()).collect();
        let last = numbers.len() - 2;
        if tag.contains("marker-start") { (numbers[0], numbers[1]) } else { (numbers[last], numbers[last + 1]) }
    }

    /// How far `point` is from the box `rect` (0 on its edge or inside).
    fn distance(point: (f64, f64), rect: (f64, f64, f64, f64)) -> f64 {
        let dx = (rect.0 - point.0).max(point.0 - (rect.0 + rect.2)).max(0.0);
        let dy = (rect.1 - point.1).max(point.1 - (rect.1 + rect.3)).max(0.0);
        (dx * dx + dy * dy).sqrt()
    }

    #[test]
    fn every_edge_points_at_its_target_loops_included() {
        // The new-workflow template's shape: a review that sends the draft back.
        let graph = Graph {
            nodes: vec![node("draft", ""), node("review", ""), node("publish", "")],
            edges: vec![
                edge("draft", "success", "review"),
                edge("review", "approve", "publish"),
                edge("review", "rework", "draft"),
                edge("publish", "success", "$end"),
            ],
            ..Graph::default()
        };
        let svg = graph.svg();
        for (from, to) in [("draft", "review"), ("review", "publish"), ("review", "draft")] {
            let head = head_of(&svg, from, to);
            let (at_target, at_source) = (distance(head, rect_of(&svg, to)), distance(head, rect_of(&svg, from)));
            let why = format!("{from} → {to}: head {head:?} {at_target} from {to}: {svg}");
            assert!(at_target < 4.0 && at_source > at_target, "{why}");
        }
        assert!(svg.contains("data-from=\"review\" data-to=\"draft\""), "{svg}");
        assert_eq!(svg.matches("marker-start").count(), 1, "only the loop is turned around: {svg}");
    }

    #[test]
    fn a_runs_path_is_marked_and_a_node_without_transitions_ends_at_end() {
        let diagram = cairn_roscoe::diagram::Diagram {
            mermaid: String::new(),
            nodes: ["a", "b", "c"]
                .map(|id| cairn_roscoe::diagram::DiagramNode {
                    id: id.into(),
                    kind: cairn_roscoe::definition::NodeType::Script,
                    label: id.into(),
                    status: None,
                })
                .to_vec(),
            edges: vec![
                cairn_roscoe::diagram::DiagramEdge { from: "a".into(), event: "success".into(), to: "b".into() },
                cairn_roscoe::diagram::DiagramEdge { from: "a".into(), event: "failure".into(), to: "c".into() },
            ],
        };
        let mut graph = Graph::from(diagram);
        let ends = [edge("b", "", "$end"), edge("c", "", "$end")];
        assert!(ends.iter().all(|e| graph.edges.contains(e)), "sinks end");
        graph.mark_taken([("a", "success"), ("b", "success")]);
        let svg = graph.svg();
        assert!(svg.contains("<path class=\"edge taken\" data-from=\"a\" data-to=\"b\""), "{svg}");
        assert!(svg.contains("<path class=\"edge taken\" data-from=\"b\" data-to=\"$end\""), "{svg}");
        assert!(svg.contains("<path class=\"edge\" data-from=\"a\" data-to=\"c\""), "not taken: {svg}");
        assert_eq!(svg.matches("class=\"terminal terminal-end\"").count(), 1, "one end circle: {svg}");
    }

    #[test]
    fn text_is_escaped_and_unknown_targets_are_left_out() {
        let mut odd = node("a", "");
        odd.label = "<b>\"x\" & y</b>".into();
        let svg = Graph { nodes: vec![odd], edges: vec![edge("a", "go", "missing")], ..Graph::default() }.svg();
        assert!(svg.contains("&lt;b&gt;&quot;x&quot; &amp; y&lt;/b&gt;"), "{svg}");
        assert!(!svg.contains("<b>"));
        assert_eq!(Graph::default().svg(), "");
    }
}
