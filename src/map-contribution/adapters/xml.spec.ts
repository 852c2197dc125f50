import fc from 'fast-check';
import {
  childNamed,
  escapeXmlAttribute,
  isXmlSafe,
  parseXml,
  tagsOf,
  xmlElement,
  XmlSyntaxError,
} from './xml.js';

describe('xml writer', () => {
  it('escapes markup, quotes and whitespace that attribute normalisation would lose', () => {
    expect(escapeXmlAttribute(`a<b>&"c"'d'\te\nf\r`)).toBe(
      'a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;&#9;e&#10;f&#13;',
    );
  });

  it('refuses characters XML cannot carry', () => {
    expect(() => escapeXmlAttribute('bell\u0007')).toThrow(RangeError);
    expect(() => escapeXmlAttribute('lone \ud800 surrogate')).toThrow(RangeError);
    expect(isXmlSafe('emoji 📚 and umlauts äöü')).toBe(true);
  });

  it('writes nested and self-closing elements', () => {
    expect(xmlElement('osm', {}, [xmlElement('tag', { k: 'a', v: 1 })])).toBe(
      '<osm><tag k="a" v="1"/></osm>',
    );
  });

  it('round-trips any XML-safe attribute value through the parser', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme' }).filter(isXmlSafe),
        fc.string({ unit: 'binary' }).filter(isXmlSafe),
        (k, v) => {
          const root = parseXml(xmlElement('osm', {}, [xmlElement('tag', { k, v })]));
          expect(tagsOf(root)).toEqual({ [k]: v });
        },
      ),
    );
  });
});

describe('xml parser', () => {
  it('reads declarations, comments, CDATA, entities and character references', () => {
    const root = parseXml(
      '\uFEFF<?xml version="1.0"?>\n<!-- note --><osm a=\'1 &amp; 2\'>' +
        '<x b="&#x41;&#66;&lt;"/><y><![CDATA[<raw>]]> &gt;</y></osm>',
    );
    expect(root.attrs).toEqual({ a: '1 & 2' });
    expect(childNamed(root, 'x')?.attrs.b).toBe('AB<');
    expect(childNamed(root, 'y')?.text).toBe('<raw> >');
  });

  it.each([
    ['a document type declaration', '<!DOCTYPE osm [<!ENTITY x "y">]><osm/>'],
    ['mismatched tags', '<osm><a></b></osm>'],
    ['an unclosed element', '<osm><a>'],
    ['two roots', '<osm/><osm/>'],
    ['text outside the root', 'hello <osm/>'],
    ['a bare ampersand', '<osm a="x & y"/>'],
    ['an unknown entity', '<osm a="&nbsp;"/>'],
    ['a duplicate attribute', '<osm a="1" a="2"/>'],
    ['an unquoted attribute', '<osm a=1/>'],
    ['nothing', '   '],
  ])('refuses %s', (_, source) => {
    expect(() => parseXml(source)).toThrow(XmlSyntaxError);
  });

  it('refuses tags without k or v, repeated keys and repeated single children', () => {
    expect(() => tagsOf(parseXml('<n><tag k="a"/></n>'))).toThrow(XmlSyntaxError);
    expect(() => tagsOf(parseXml('<n><tag k="a" v="1"/><tag k="a" v="2"/></n>'))).toThrow(
      XmlSyntaxError,
    );
    expect(() => childNamed(parseXml('<n><a/><a/></n>'), 'a')).toThrow(XmlSyntaxError);
  });
});
