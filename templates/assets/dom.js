// The one way the theme's scripts build DOM: h(tag, attributes, ...children). Children are nodes or
// strings, and strings become text nodes, so data never passes through the HTML parser.
const SVG = "http://www.w3.org/2000/svg";

function fill(node, attrs, children) {
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith(".")) node[key.slice(1)] = value;  // a property: ".tabIndex", ".hidden"
    else if (value !== false && value != null) node.setAttribute(key, value === true ? "" : value);
  }
  node.append(...children);
  return node;
}

/** Return a new element with attributes, properties (keys starting with ".") and text or nodes. */
export function h(tag, attrs = {}, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

/** The same for an SVG element (widget views draw into the SVG of their build-time result). */
export function svg(tag, attrs = {}, ...children) {
  return fill(document.createElementNS(SVG, tag), attrs, children);
}
