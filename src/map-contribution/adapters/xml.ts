/**
 * The little XML the map API 0.6 speaks: a writer that escapes every attribute value, and a strict, DOM-free parser
 * for the small, flat documents it answers with (permissions, capabilities, changesets, osmChange).
 * No DTD, no entity expansion beyond the five predefined entities and character references.
 */

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

export class XmlSyntaxError extends Error {
  constructor(reason: string) {
    super(`malformed XML: ${reason}`);
    this.name = 'XmlSyntaxError';
  }
}

/** Characters XML 1.0 cannot carry at all, even escaped (C0 controls other than tab, LF and CR; lone surrogates). */
// eslint-disable-next-line no-control-regex
const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|\p{Cs}/u;

export function isXmlSafe(value: string): boolean {
  return !NOT_XML_CHAR.test(value);
}

/** Escapes an attribute value; tab, LF and CR become character references so attribute normalisation keeps them. */
export function escapeXmlAttribute(value: string): string {
  if (!isXmlSafe(value)) throw new RangeError('value holds characters XML cannot carry');
  return value.replace(/[&<>"'\t\n\r]/g, (char) => ESCAPES[char]);
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  '\t': '&#9;',
  '\n': '&#10;',
  '\r': '&#13;',
};

/** One element as text: `<name a="1">children</name>`, or self-closing when it has no children. */
export function xmlElement(
  name: string,
  attrs: Record<string, string | number>,
  children: string[] = [],
): string {
  const attributes = Object.entries(attrs)
    .map(([key, value]) => ` ${key}="${escapeXmlAttribute(String(value))}"`)
    .join('');
  return children.length
    ? `<${name}${attributes}>${children.join('')}</${name}>`
    : `<${name}${attributes}/>`;
}

export function xmlDocument(root: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n${root}`;
}

const NAME = '[A-Za-z_][\\w.:-]*';
const START_TAG = new RegExp(
  `^<(${NAME})((?:\\s+${NAME}\\s*=\\s*(?:"[^"<]*"|'[^'<]*'))*)\\s*(/?)>`,
);
const ATTRIBUTE = new RegExp(`(${NAME})\\s*=\\s*(?:"([^"<]*)"|'([^'<]*)')`, 'g');
const END_TAG = new RegExp(`^</(${NAME})\\s*>`);

/** Parses a whole document into its root element; throws XmlSyntaxError on anything it does not understand. */
export function parseXml(source: string): XmlElement {
  let rest = source.replace(/^\uFEFF/, '');
  let root: XmlElement | null = null;
  const open: XmlElement[] = [];

  while (rest.length) {
    const lt = rest.indexOf('<');
    const text = lt === -1 ? rest : rest.slice(0, lt);
    if (text) {
      if (open.length) open[open.length - 1].text += decodeEntities(text);
      else if (text.trim()) throw new XmlSyntaxError('text outside the root element');
      rest = rest.slice(text.length);
      continue;
    }
    if (rest.startsWith('<?')) {
      const end = rest.indexOf('?>');
      if (end === -1) throw new XmlSyntaxError('unterminated processing instruction');
      rest = rest.slice(end + 2);
      continue;
    }
    if (rest.startsWith('<!--')) {
      const end = rest.indexOf('-->', 4);
      if (end === -1) throw new XmlSyntaxError('unterminated comment');
      rest = rest.slice(end + 3);
      continue;
    }
    if (rest.startsWith('<![CDATA[')) {
      const end = rest.indexOf(']]>');
      if (end === -1 || !open.length) throw new XmlSyntaxError('misplaced CDATA section');
      open[open.length - 1].text += rest.slice(9, end);
      rest = rest.slice(end + 3);
      continue;
    }
    if (rest.startsWith('<!')) throw new XmlSyntaxError('document type declarations are refused');

    const end = END_TAG.exec(rest);
    if (end) {
      const element = open.pop();
      if (!element || element.name !== end[1]) throw new XmlSyntaxError(`unexpected </${end[1]}>`);
      rest = rest.slice(end[0].length);
      continue;
    }
    const start = START_TAG.exec(rest);
    if (!start) throw new XmlSyntaxError('unreadable tag');
    const element: XmlElement = {
      name: start[1],
      attrs: parseAttributes(start[2]),
      children: [],
      text: '',
    };
    if (open.length) open[open.length - 1].children.push(element);
    else if (root) throw new XmlSyntaxError('more than one root element');
    else root = element;
    if (!start[3]) open.push(element);
    rest = rest.slice(start[0].length);
  }

  if (open.length) throw new XmlSyntaxError(`unclosed <${open[open.length - 1].name}>`);
  if (!root) throw new XmlSyntaxError('no root element');
  return root;
}

/** Records are built with Object.fromEntries so that a name like `__proto__` stays an ordinary own key. */
function parseAttributes(source: string): Record<string, string> {
  const attrs = new Map<string, string>();
  for (const match of source.matchAll(ATTRIBUTE)) {
    if (attrs.has(match[1])) throw new XmlSyntaxError(`duplicate attribute ${match[1]}`);
    attrs.set(match[1], decodeEntities(match[2] ?? match[3]));
  }
  return Object.fromEntries(attrs);
}

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
};

function decodeEntities(text: string): string {
  return text.replace(/&([^;&\s]*);?/g, (whole, entity: string) => {
    if (!whole.endsWith(';')) throw new XmlSyntaxError('bare ampersand');
    if (Object.hasOwn(NAMED_ENTITIES, entity)) return NAMED_ENTITIES[entity];
    const code = /^#x([0-9a-f]{1,6})$/i.test(entity)
      ? parseInt(entity.slice(2), 16)
      : /^#([0-9]{1,7})$/.test(entity)
        ? parseInt(entity.slice(1), 10)
        : NaN;
    if (!Number.isInteger(code) || code > 0x10ffff) {
      throw new XmlSyntaxError('unknown entity');
    }
    const char = String.fromCodePoint(code);
    if (!isXmlSafe(char)) throw new XmlSyntaxError('character reference outside XML');
    return char;
  });
}

/** The direct children named `name`. */
export function childrenNamed(element: XmlElement, name: string): XmlElement[] {
  return element.children.filter((child) => child.name === name);
}

/** The single direct child named `name`, or null when it is absent. Two of them is malformed. */
export function childNamed(element: XmlElement, name: string): XmlElement | null {
  const found = childrenNamed(element, name);
  if (found.length > 1) throw new XmlSyntaxError(`more than one <${name}>`);
  return found[0] ?? null;
}

/** The `<tag k v/>` children of an element as a record; duplicate keys or missing attributes are malformed. */
export function tagsOf(element: XmlElement): Record<string, string> {
  const tags = new Map<string, string>();
  for (const tag of childrenNamed(element, 'tag')) {
    const k = Object.hasOwn(tag.attrs, 'k') ? tag.attrs.k : undefined;
    const v = Object.hasOwn(tag.attrs, 'v') ? tag.attrs.v : undefined;
    if (k === undefined || v === undefined) throw new XmlSyntaxError('<tag> without k or v');
    if (tags.has(k)) throw new XmlSyntaxError(`duplicate tag ${k}`);
    tags.set(k, v);
  }
  return Object.fromEntries(tags);
}
