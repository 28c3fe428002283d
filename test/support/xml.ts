/** A small strict XML reader for generated documents (SVG): throws on anything not well-formed, returns the element tree. */

/** An element with its attributes, child elements and the text directly inside it (entities decoded). */
export interface XmlElement {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: XmlElement[];
  text: string;
}

const entities: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decode(raw: string, where: string): string {
  if (raw.includes("<")) throw new Error(`unescaped "<" in ${where}`);
  return raw.replace(/&([^;\s&]*);?/g, (match, name: string) => {
    if (!match.endsWith(";")) throw new Error(`unterminated entity "${match}" in ${where}`);
    const numeric = /^#(x[0-9a-fA-F]+|[0-9]+)$/.exec(name);
    if (numeric?.[1] !== undefined) {
      const code = numeric[1].startsWith("x") ? Number.parseInt(numeric[1].slice(1), 16) : Number(numeric[1]);
      return String.fromCodePoint(code);
    }
    const value = entities[name];
    if (value === undefined) throw new Error(`unknown entity "&${name};" in ${where}`);
    return value;
  });
}

const nameChars = "[A-Za-z_][\\w:.-]*";
const tagPattern = new RegExp(
  `^<(/?)(${nameChars})((?:\\s+${nameChars}\\s*=\\s*(?:"[^"]*"|'[^']*'))*)\\s*(/?)>`,
);
const attributePattern = new RegExp(`(${nameChars})\\s*=\\s*(?:"([^"]*)"|'([^']*)')`, "g");

/** Parses `source` (an optional `<?xml …?>` prolog, comments, one root element); throws with the reason if it is not well-formed. */
export function parseXml(source: string): XmlElement {
  let rest = source.replace(/^<\?xml[^?]*\?>/, "");
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  while (rest.length > 0) {
    if (rest.startsWith("<!--")) {
      const end = rest.indexOf("-->");
      if (end < 0) throw new Error("unterminated comment");
      rest = rest.slice(end + 3);
      continue;
    }
    if (rest.startsWith("<")) {
      const tag = tagPattern.exec(rest);
      if (!tag) throw new Error(`malformed tag at "${rest.slice(0, 40)}"`);
      const [whole, closing, name = "", attributeText = "", selfClosing] = tag;
      rest = rest.slice(whole.length);
      if (closing) {
        if (attributeText.trim() !== "" || selfClosing) throw new Error(`malformed closing tag </${name}>`);
        const open = stack.pop();
        if (open?.name !== name) throw new Error(`</${name}> closes <${open?.name ?? "nothing"}>`);
        continue;
      }
      const attributes: Record<string, string> = {};
      for (const [, key = "", double, single] of attributeText.matchAll(attributePattern)) {
        if (key in attributes) throw new Error(`duplicate attribute ${key} on <${name}>`);
        attributes[key] = decode(double ?? single ?? "", `attribute ${key} of <${name}>`);
      }
      const element: XmlElement = { name, attributes, children: [], text: "" };
      const parent = stack.at(-1);
      if (parent) parent.children.push(element);
      else if (root) throw new Error(`a second root element <${name}>`);
      else root = element;
      if (!selfClosing) stack.push(element);
      continue;
    }
    const next = rest.indexOf("<");
    const raw = next < 0 ? rest : rest.slice(0, next);
    rest = next < 0 ? "" : rest.slice(next);
    const parent = stack.at(-1);
    if (parent) parent.text += decode(raw, `<${parent.name}>`);
    else if (raw.trim() !== "")
      throw new Error(`text outside the root element: "${raw.trim().slice(0, 40)}"`);
  }
  if (stack.length > 0) throw new Error(`<${stack.at(-1)?.name}> is never closed`);
  if (!root) throw new Error("no root element");
  return root;
}

/** Every element in the tree under (and including) `element`, in document order. */
export function descendants(element: XmlElement): XmlElement[] {
  return [element, ...element.children.flatMap(descendants)];
}
