// A minimal, strict XML 1.0 parser for the JUnit tests: elements, attributes (quoted), text,
// the five predefined entities and character references, an optional <?xml ...?> declaration.
// It throws on anything not well-formed (mismatched tags, raw < or & in text, unquoted or
// duplicate attributes, bad entities, trailing content) — enough to prove our writer's output
// parses, without a dependency.

export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  /** Concatenated text content directly inside this element (entities decoded). */
  text: string;
}

const NAME = /[A-Za-z_:][A-Za-z0-9_.:-]*/y;

function decodeEntities(raw: string, at: number): string {
  if (raw.includes('<')) throw new Error(`XML: raw "<" in text or attribute near offset ${at}`);
  return raw.replace(/&([^;]*);?/g, (match, body: string) => {
    if (!match.endsWith(';')) throw new Error(`XML: unterminated entity "${match}" near offset ${at}`);
    switch (body) {
      case 'amp':
        return '&';
      case 'lt':
        return '<';
      case 'gt':
        return '>';
      case 'quot':
        return '"';
      case 'apos':
        return "'";
    }
    const hex = /^#x([0-9A-Fa-f]+)$/.exec(body);
    const dec = /^#([0-9]+)$/.exec(body);
    const code = hex ? Number.parseInt(hex[1] as string, 16) : dec ? Number.parseInt(dec[1] as string, 10) : Number.NaN;
    const allowed =
      code === 0x9 ||
      code === 0xa ||
      code === 0xd ||
      (code >= 0x20 && code <= 0xd7ff) ||
      (code >= 0xe000 && code <= 0xfffd) ||
      (code >= 0x10000 && code <= 0x10ffff);
    if (!allowed) throw new Error(`XML: bad entity "&${body};" near offset ${at}`);
    return String.fromCodePoint(code);
  });
}

const INVALID_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

export function parseXml(source: string): XmlElement {
  if (INVALID_CHAR.test(source)) throw new Error('XML: a character XML 1.0 cannot hold');
  let pos = 0;
  const skipSpace = (): void => {
    while (pos < source.length && /\s/.test(source[pos] as string)) pos++;
  };
  const readName = (): string => {
    NAME.lastIndex = pos;
    const match = NAME.exec(source);
    if (match === null) throw new Error(`XML: expected a name at offset ${pos}`);
    pos += match[0].length;
    return match[0];
  };
  if (source.startsWith('<?xml')) {
    const end = source.indexOf('?>');
    if (end < 0) throw new Error('XML: unterminated declaration');
    pos = end + 2;
  }
  skipSpace();

  const parseElement = (): XmlElement => {
    if (source[pos] !== '<') throw new Error(`XML: expected "<" at offset ${pos}`);
    pos++;
    const name = readName();
    const attributes: Record<string, string> = {};
    for (;;) {
      const before = pos;
      skipSpace();
      if (source.startsWith('/>', pos)) {
        pos += 2;
        return { name, attributes, children: [], text: '' };
      }
      if (source[pos] === '>') {
        pos++;
        break;
      }
      if (pos === before) throw new Error(`XML: expected whitespace before an attribute at offset ${pos}`);
      const attribute = readName();
      skipSpace();
      if (source[pos] !== '=') throw new Error(`XML: expected "=" after attribute ${attribute} at offset ${pos}`);
      pos++;
      skipSpace();
      const quote = source[pos];
      if (quote !== '"' && quote !== "'") throw new Error(`XML: unquoted attribute ${attribute} at offset ${pos}`);
      const end = source.indexOf(quote, pos + 1);
      if (end < 0) throw new Error(`XML: unterminated attribute ${attribute}`);
      if (attribute in attributes) throw new Error(`XML: duplicate attribute ${attribute}`);
      attributes[attribute] = decodeEntities(source.slice(pos + 1, end), pos);
      pos = end + 1;
    }
    const children: XmlElement[] = [];
    let text = '';
    for (;;) {
      if (pos >= source.length) throw new Error(`XML: <${name}> is never closed`);
      if (source.startsWith('</', pos)) {
        pos += 2;
        const closing = readName();
        if (closing !== name) throw new Error(`XML: </${closing}> closes <${name}>`);
        skipSpace();
        if (source[pos] !== '>') throw new Error(`XML: expected ">" at offset ${pos}`);
        pos++;
        return { name, attributes, children, text };
      }
      if (source.startsWith('<!--', pos)) {
        const end = source.indexOf('-->', pos);
        if (end < 0) throw new Error('XML: unterminated comment');
        pos = end + 3;
        continue;
      }
      if (source[pos] === '<') {
        children.push(parseElement());
        continue;
      }
      const next = source.indexOf('<', pos);
      const end = next < 0 ? source.length : next;
      const raw = source.slice(pos, end);
      if (raw.includes(']]>')) throw new Error(`XML: "]]>" in text at offset ${pos}`);
      text += decodeEntities(raw, pos);
      pos = end;
    }
  };

  const root = parseElement();
  skipSpace();
  if (pos !== source.length) throw new Error(`XML: content after the root element at offset ${pos}`);
  return root;
}

export function findAll(element: XmlElement, name: string): XmlElement[] {
  const found: XmlElement[] = [];
  const walk = (node: XmlElement): void => {
    if (node.name === name) found.push(node);
    node.children.forEach(walk);
  };
  walk(element);
  return found;
}
