import { createHash } from 'node:crypto';
import { jsonEtag, textEtag } from './cache-control.js';

describe('textEtag', () => {
  it('is the first 32 characters of the base64url SHA-256 of the UTF-8 bytes, quoted (the same values as before)', () => {
    for (const json of ['{}', '{"name":"Bücherschrank 📚 \\u2028"}', 'x'.repeat(20_000)]) {
      const digest = createHash('sha256').update(Buffer.from(json, 'utf8')).digest('base64url');
      expect(textEtag(json)).toBe(`"${digest.slice(0, 32)}"`);
    }
  });

  it('gives a body the validator of the JSON text Express sends', () => {
    const body = { items: [{ id: 1, name: 'Zürich' }], total: 1 };
    expect(jsonEtag(body)).toBe(textEtag(JSON.stringify(body)));
  });
});
