// The exercise code editor, bundled by scripts/bundle-editor.mjs into templates/assets/vendor/codemirror.js.
// CodeMirror 6 with a small set of extensions; Escape then Tab leaves the editor (CodeMirror's tab-focus mode).
// The editor lives in a shadow root: there CodeMirror styles itself with a constructed stylesheet, which the
// page's Content-Security-Policy (style-src 'self', no inline <style>) allows. CSS custom properties such as
// the theme's --mono and --line still reach it through the shadow boundary.
import { EditorView, keymap, lineNumbers, highlightActiveLine, drawSelection } from "@codemirror/view";
import { EditorState } from "@codemirror/state";
import { history, historyKeymap, defaultKeymap, indentWithTab } from "@codemirror/commands";
import { indentOnInput, indentUnit, bracketMatching, syntaxHighlighting, HighlightStyle } from "@codemirror/language";
import { python } from "@codemirror/lang-python";
import { tags } from "@lezer/highlight";

const look = EditorView.theme({
  "&": { border: "1px solid var(--line, #888)", borderRadius: "var(--radius, 4px)", background: "var(--bg, #fff)",
    color: "var(--fg, #111)", fontSize: ".9rem" },
  "&.cm-focused": { outline: "2px solid var(--accent, Highlight)", outlineOffset: "1px" },
  ".cm-scroller": { fontFamily: "var(--mono, ui-monospace, monospace)", minHeight: "8rem" },
  ".cm-gutters": { background: "transparent", color: "var(--muted, #555)", borderRight: "1px solid var(--line, #888)" },
  ".cm-content": { caretColor: "var(--fg, #111)" },
  ".cm-cursor, .cm-dropCursor": { borderLeftColor: "var(--fg, #111)" },
  ".cm-activeLine, .cm-activeLineGutter": { backgroundColor: "var(--code-line, transparent)" },
  "& .cm-selectionBackground, &.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground":
    { background: "var(--code-selection, #b3d4fc)" },
  ".cm-matchingBracket": { outline: "1px solid var(--muted, #555)", background: "transparent" },
});

// Token colours come from the theme's variables (style.css sets them for the light and the dark scheme,
// the same colours as the page's highlighted code), so the editor follows the scheme the page shows.
const tokenColours = HighlightStyle.define([
  { tag: [tags.keyword, tags.controlKeyword, tags.operatorKeyword, tags.definitionKeyword, tags.moduleKeyword],
    color: "var(--code-keyword, #708)", fontWeight: "600" },
  { tag: [tags.string, tags.special(tags.string)], color: "var(--code-string, #a11)" },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: "var(--code-number, #164)" },
  { tag: tags.comment, color: "var(--code-comment, #555)", fontStyle: "italic" },
  { tag: [tags.function(tags.definition(tags.variableName)), tags.definition(tags.className)],
    color: "var(--code-definition, #00f)" },
  { tag: [tags.standard(tags.variableName), tags.self], color: "var(--code-builtin, #164)" },
  { tag: tags.invalid, color: "var(--bad, #a11)" },
]);

// Typing over a selection of several lines is left to the browser by default, and Chromium's own editing
// then makes elements with style attributes, which the CSP blocks (a console error each time). Such a
// replacement is done as a CodeMirror transaction instead; plain typing and IME composition stay native.
const typeOverSelection = EditorView.domEventHandlers({
  beforeinput(event, view) {
    if (event.inputType !== "insertText" || event.isComposing || event.data == null) return false;
    if (view.state.selection.ranges.every((range) => range.empty)) return false;
    event.preventDefault();
    view.dispatch({ ...view.state.replaceSelection(event.data), scrollIntoView: true, userEvent: "input.type" });
    return true;
  },
});

/** Replace `textarea` by an editor holding its value; call onChange(text) on each edit. Returns the view. */
export function createEditor(textarea, { onChange = () => {} } = {}) {
  const host = document.createElement("div");
  host.className = "exercise-code-editor";
  const root = host.attachShadow({ mode: "open" });
  const view = new EditorView({
    root, parent: root,
    state: EditorState.create({
      doc: textarea.value,
      extensions: [
        lineNumbers(), history(), drawSelection(), highlightActiveLine(), bracketMatching(),
        indentOnInput(), indentUnit.of("    "), python(), look, typeOverSelection,
        EditorView.lineWrapping,  // long lines wrap: no sideways scroller, which a keyboard could not reach
        syntaxHighlighting(tokenColours),
        keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
        EditorView.contentAttributes.of(contentAttributes(textarea)),
        EditorView.updateListener.of((update) => { if (update.docChanged) onChange(update.state.doc.toString()); }),
      ],
    }),
  });
  textarea.after(host);
  textarea.hidden = true;
  return view;
}

/** The textarea's accessible name, carried over to the editor's content element. */
function contentAttributes(textarea) {
  const attributes = { "aria-label": textarea.labels?.[0]?.textContent.trim() || textarea.getAttribute("aria-label") || "Code" };
  return attributes;  // aria-describedby cannot point out of the shadow root; the keys line stays visible
}
