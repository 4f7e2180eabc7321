// The workflow editor: CodeMirror (YAML mode, line numbers) over the form's textarea; as you type, the text is posted
// to the form's data-check URL, whose findings are marked on their lines (a gutter marker and a line class) and
// listed, and whose graph replaces the preview. Saving is the form's ordinary submit (CodeMirror writes the text
// back to the textarea first).
document.addEventListener('DOMContentLoaded', () => {
  const form = document.getElementById('editor');
  const textarea = document.getElementById('yaml');
  if (!form || !textarea || !window.CodeMirror) return;
  const editor = window.CodeMirror.fromTextArea(textarea, {
    mode: 'yaml', lineNumbers: true, indentUnit: 2, tabSize: 2, gutters: ['findings', 'CodeMirror-linenumbers'],
    // Tab and Shift-Tab leave the editor, as everywhere else on the page (indent with spaces).
    extraKeys: { Tab: false, 'Shift-Tab': false },
  });
  editor.getInputField().setAttribute('aria-label', 'Workflow YAML');
  window.workflowEditor = editor;
  const list = document.getElementById('findings');
  const graph = document.getElementById('graph');
  let marked = [];

  function show(findings) {
    for (const line of marked) editor.removeLineClass(line, 'background');
    editor.clearGutter('findings');
    marked = [];
    list.replaceChildren();
    const none = document.getElementById('no-findings');
    if (none) none.hidden = findings.length > 0;
    for (const f of findings) {
      const item = document.createElement('li');
      item.className = `finding ${f.severity}`;
      item.dataset.line = f.line;
      item.dataset.code = f.code;
      item.textContent = `${f.line > 0 ? `line ${f.line}: ` : ''}${f.code} ${f.message}`;
      list.append(item);
      if (f.line > 0 && f.line <= editor.lineCount()) {
        const line = f.line - 1;
        const marker = document.createElement('span');
        marker.className = `finding-marker ${f.severity}`;
        marker.title = f.message;
        marker.textContent = f.severity === 'error' ? '●' : '▲';
        marker.dataset.line = f.line;
        editor.setGutterMarker(line, 'findings', marker);
        editor.addLineClass(line, 'background', `line-${f.severity}`);
        marked.push(line);
      }
    }
  }

  let timer = null;
  let asked = 0;
  async function check() {
    const ask = ++asked;
    const body = new URLSearchParams({ csrf: form.elements.csrf.value, yaml: editor.getValue(), id: form.elements.id?.value ?? '' });
    const response = await fetch(form.dataset.check, { method: 'POST', body, credentials: 'same-origin' });
    if (!response.ok || ask !== asked) return;
    const answer = await response.json();
    show(answer.findings);
    if (answer.graph) graph.innerHTML = answer.graph;
  }
  editor.on('change', () => {
    clearTimeout(timer);
    timer = setTimeout(check, 300);
  });
  check();
});
