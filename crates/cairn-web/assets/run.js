// The run page: a graph node links to its row of the timeline (#node-<id>); opening the link (or the page at it, or
// a live update while it is open) unfolds that row's input and output. Without this script the link still leads to
// the row, whose details open with a click.
function openLinkedNode() {
  const id = decodeURIComponent(window.location.hash.slice(1));
  const row = id.startsWith('node-') ? document.getElementById(id) : null;
  if (row) row.querySelectorAll('details').forEach((details) => { details.open = true; });
}
window.addEventListener('hashchange', openLinkedNode);
document.addEventListener('DOMContentLoaded', openLinkedNode);
document.addEventListener('htmx:after:swap', openLinkedNode);
