import { parseAiReply, type AiReplyProblem } from './ai-reply.parser.js';

const json = (value: unknown) => JSON.stringify(value);
const good = {
  name: 'Bücherschrank am Marktplatz',
  description: 'A red telephone box full of books.',
};

describe('parseAiReply', () => {
  const accepted: [string, unknown, { name: string; description: string }][] = [
    ['plain JSON', json(good), good],
    ['keys in the other order', json({ description: good.description, name: good.name }), good],
    ['a ```json fence', `\`\`\`json\n${json(good)}\n\`\`\``, good],
    ['a bare ``` fence', `\`\`\`\n${json(good)}\n\`\`\``, good],
    ['an upper-case JSON fence with CRLF', `\`\`\`JSON\r\n${json(good)}\r\n\`\`\``, good],
    ['surrounding whitespace', `\n  ${json(good)}  \n`, good],
    [
      'values with padding are trimmed',
      json({ name: '  Lindenweg bookcase ', description: ' Two shelves.\nDry inside. ' }),
      { name: 'Lindenweg bookcase', description: 'Two shelves.\nDry inside.' },
    ],
    [
      'a name of exactly 255 characters',
      json({ ...good, name: 'n'.repeat(255) }),
      { ...good, name: 'n'.repeat(255) },
    ],
    [
      'a description of exactly 2000 characters (code points, not UTF-16 units)',
      json({ ...good, description: '📚'.repeat(2000) }),
      { ...good, description: '📚'.repeat(2000) },
    ],
  ];

  it.each(accepted)('accepts %s', (_label, content, expected) => {
    expect(parseAiReply(content)).toEqual({ ok: true, value: expected });
  });

  const refused: [string, unknown, AiReplyProblem][] = [
    ['no content at all', undefined, 'not_text'],
    ['null content', null, 'not_text'],
    ['content parts instead of text', [{ type: 'text', text: json(good) }], 'not_text'],
    ['free text', 'This is a lovely little bookcase near the station.', 'not_json'],
    ['free text around JSON', `Sure! Here it is: ${json(good)}`, 'not_json'],
    [
      'a fence with text after it',
      `\`\`\`json\n${json(good)}\n\`\`\`\nHope this helps`,
      'not_json',
    ],
    ['an unterminated fence', `\`\`\`json\n${json(good)}`, 'not_json'],
    ['empty text', '', 'not_json'],
    ['a JSON array', json([good]), 'not_object'],
    ['a JSON string', json('Bookcase'), 'not_object'],
    ['JSON null', 'null', 'not_object'],
    ['an extra key', json({ ...good, confidence: 0.9 }), 'unexpected_keys'],
    ['a missing description', json({ name: good.name }), 'unexpected_keys'],
    ['a missing name', json({ description: good.description }), 'unexpected_keys'],
    [
      'differently cased keys',
      json({ Name: good.name, description: good.description }),
      'unexpected_keys',
    ],
    ['an empty object', '{}', 'unexpected_keys'],
    ['a numeric name', json({ ...good, name: 42 }), 'wrong_type'],
    ['a null description', json({ ...good, description: null }), 'wrong_type'],
    ['a nested object as name', json({ ...good, name: { text: 'x' } }), 'wrong_type'],
    ['an empty name', json({ ...good, name: '' }), 'empty_value'],
    ['a blank description', json({ ...good, description: '   ' }), 'empty_value'],
    ['a name over 255 characters', json({ ...good, name: 'n'.repeat(256) }), 'too_long'],
    [
      'a description over 2000 characters',
      json({ ...good, description: 'd'.repeat(2001) }),
      'too_long',
    ],
    ['a line break inside the name', json({ ...good, name: 'Book\ncase' }), 'control_characters'],
    [
      'a NUL inside the description',
      json({ ...good, description: 'Books\u0000' }),
      'control_characters',
    ],
  ];

  it.each(refused)('refuses %s', (_label, content, problem) => {
    expect(parseAiReply(content)).toEqual({ ok: false, problem });
  });
});
