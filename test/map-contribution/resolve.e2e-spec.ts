/**
 * POST /{slug}/resolve on a possible duplicate: same_feature links the element (already_present, nothing created,
 * no write call), different_feature keeps the block until a fresh check passes (the resolved candidate then only
 * warns, and the confirm can proceed), unclear stays; anything but a possible duplicate is 409.
 */
import {
  DEG_PER_M,
  adminGet,
  adminPost,
  checkPasses,
  codes,
  contributionRow,
  submitLibrary,
  type SubmittedLibrary,
  mapSuite,
  refusal,
} from './helpers.js';

describe('map contribution duplicate resolution', () => {
  const { fake, db, t, staff, owner } = mapSuite({ resetFake: true });

  const bookcaseAt = (lib: SubmittedLibrary, metres: number, id: number) => ({
    type: 'node' as const,
    id,
    lat: lib.lat + metres * DEG_PER_M,
    lon: lib.lng,
    tags: { amenity: 'public_bookcase' },
  });

  /** A library with a bookcase `id` 10 m away: possible_duplicate. */
  const duplicated = async (id: number) => {
    const lib = await submitLibrary(t.http, owner, staff);
    fake.seedQuery(bookcaseAt(lib, 10, id));
    const res = await adminPost(t.http, staff.access, `/${lib.slug}/check`);
    expect([res.status, res.body.status]).toEqual([200, 'possible_duplicate']);
    return lib;
  };

  const resolve = (lib: SubmittedLibrary, body: object) =>
    adminPost(t.http, staff.access, `/${lib.slug}/resolve`, body);

  /** Resolves with an outcome about node `id` of the map. */
  const resolveNode = (lib: SubmittedLibrary, outcome: string, id: number, reason: string) =>
    resolve(lib, { outcome, element_type: 'node', element_id: id, reason });

  it('same_feature links the element: already_present, nothing created, no write call', async () => {
    const lib = await duplicated(51);
    const res = await resolveNode(
      lib,
      'same_feature',
      51,
      'Same bookcase: the photo on the map matches.',
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'already_present',
      mapdb_element_type: 'node',
      mapdb_element_id: 51,
      changeset_id: null,
      contributed_at: null,
      eligible: false,
    });
    expect(codes(res.body)).toEqual(['element_recorded']);
    expect(res.body.events.at(-1)).toEqual({
      type: 'duplicate_resolution',
      outcome: 'same_feature',
      actor: { id: staff.id, username: staff.username },
      attempt_key: null,
      details: {
        outcome: 'same_feature',
        reason: 'Same bookcase: the photo on the map matches.',
        element: 'node/51',
      },
      created_at: expect.any(String),
    });

    const confirm = await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, {});
    expect([confirm.status, confirm.body]).toEqual([409, refusal('element_recorded')]);
    const check = await adminPost(t.http, staff.access, `/${lib.slug}/check`);
    expect(check.status).toBe(409);
    const again = await resolve(lib, { outcome: 'unclear', reason: 'again' });
    expect([again.status, again.body]).toEqual([409, refusal('possible_duplicate')]);

    expect(fake.writeRequests).toEqual([]);
    expect(fake.nodes.size).toBe(0);
    expect(fake.changesets.size).toBe(0);
    expect((await contributionRow(db.url, lib.id))?.status).toBe('already_present');
  });

  it('same_feature needs the element; an element linked to another library is refused', async () => {
    const lib = await duplicated(52);
    const missing = await resolve(lib, { outcome: 'same_feature', reason: 'same' });
    expect(missing.status).toBe(422);
    const taken = await duplicated(53);
    expect((await resolveNode(taken, 'same_feature', 53, 'same')).status).toBe(200);
    const clash = await resolveNode(lib, 'same_feature', 53, 'same');
    expect(clash.status).toBe(409);
    expect((await contributionRow(db.url, lib.id))?.status).toBe('possible_duplicate');
  });

  it('different_feature keeps possible_duplicate until a fresh check passes; then the confirm proceeds', async () => {
    const lib = await duplicated(61);
    const res = await resolveNode(
      lib,
      'different_feature',
      61,
      'Node 61 is the school shelf across the street.',
    );
    expect(res.status).toBe(200);
    expect([res.body.status, codes(res.body)]).toEqual([
      'possible_duplicate',
      ['possible_duplicate'],
    ]);
    expect(res.body.events.at(-1)).toMatchObject({
      type: 'duplicate_resolution',
      outcome: 'different_feature',
      details: {
        outcome: 'different_feature',
        reason: 'Node 61 is the school shelf across the street.',
        elements: ['node/61'],
      },
    });
    const early = await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, {});
    expect([early.status, early.body]).toEqual([409, refusal('possible_duplicate')]);
    expect(fake.writeRequests).toEqual([]);

    // The fresh check: the resolved candidate keeps its signals but no longer blocks.
    const check = await adminPost(t.http, staff.access, `/${lib.slug}/check`);
    expect([check.body.status, check.body.eligible]).toEqual(['no_match', true]);
    expect(check.body.duplicate_candidates).toEqual([
      {
        type: 'node',
        id: 61,
        distance_m: 10,
        tags: { amenity: 'public_bookcase' },
        signals: ['bookcase_within_25m'],
        resolved_different: true,
      },
    ]);
    const preview = await adminGet(t.http, staff.access, `/${lib.slug}/preview`);
    expect(preview.body.eligible).toBe(true);
    expect(preview.body.warnings.some((w: string) => w.includes('node/61'))).toBe(true);

    const confirm = await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, {});
    expect([confirm.status, confirm.body.status]).toEqual([200, 'contributed']);
    expect(fake.nodes.size).toBe(1);
  });

  it('different_feature covers only the resolved element: a new bookcase blocks again', async () => {
    const lib = await duplicated(62);
    await resolveNode(lib, 'different_feature', 62, 'different');
    fake.seedQuery(bookcaseAt(lib, 4, 63));
    const check = await adminPost(t.http, staff.access, `/${lib.slug}/check`);
    expect(check.body.status).toBe('possible_duplicate');
    expect(
      check.body.duplicate_candidates.map((c: { id: number; resolved_different?: true }) => [
        c.id,
        c.resolved_different ?? false,
      ]),
    ).toEqual([
      [63, false],
      [62, true],
    ]);
  });

  it('different_feature naming an element that is not a candidate is 400 and resolves nothing', async () => {
    const lib = await duplicated(64);
    const res = await resolveNode(lib, 'different_feature', 65, 'typo in the id');
    expect([res.status, res.body]).toEqual([
      400,
      { message: 'node/65 is not among the duplicate candidates.', details: null },
    ]);
    const detail = await adminGet(t.http, staff.access, `/${lib.slug}`);
    expect(detail.body.events.map((e: { type: string }) => e.type)).toEqual(['duplicate_check']);
    const check = await adminPost(t.http, staff.access, `/${lib.slug}/check`);
    expect(check.body.status).toBe('possible_duplicate');
  });

  it('different_feature without an element resolves every current candidate', async () => {
    const lib = await duplicated(66);
    fake.seedQuery(bookcaseAt(lib, 5, 67));
    expect((await adminPost(t.http, staff.access, `/${lib.slug}/check`)).body.status).toBe(
      'possible_duplicate',
    );
    const res = await resolve(lib, { outcome: 'different_feature', reason: 'Both are elsewhere.' });
    expect(res.body.events.at(-1).details.elements.sort()).toEqual(['node/66', 'node/67']);
    const check = await adminPost(t.http, staff.access, `/${lib.slug}/check`);
    expect(check.body.status).toBe('no_match');
  });

  it('unclear stays possible_duplicate and records the reason', async () => {
    const lib = await duplicated(71);
    const res = await resolve(lib, { outcome: 'unclear', reason: 'Cannot tell from the imagery.' });
    expect([res.status, res.body.status]).toEqual([200, 'possible_duplicate']);
    expect(res.body.events.at(-1)).toMatchObject({
      type: 'duplicate_resolution',
      outcome: 'unclear',
      details: { outcome: 'unclear', reason: 'Cannot tell from the imagery.' },
    });
    const confirm = await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, {});
    expect([confirm.status, confirm.body]).toEqual([409, refusal('possible_duplicate')]);
    expect(fake.writeRequests).toEqual([]);
  });

  it('resolve on anything but a possible duplicate is 409 and records nothing', async () => {
    const unchecked = await submitLibrary(t.http, owner, staff);
    const res = await resolve(unchecked, { outcome: 'unclear', reason: 'x' });
    expect([res.status, res.body]).toEqual([409, refusal('possible_duplicate')]);

    const checked = await submitLibrary(t.http, owner, staff);
    await checkPasses(t.http, staff, checked.slug);
    for (const outcome of ['same_feature', 'different_feature', 'unclear']) {
      const again = await resolveNode(checked, outcome, 99, 'x');
      expect([again.status, again.body]).toEqual([409, refusal('possible_duplicate')]);
    }
    const detail = await adminGet(t.http, staff.access, `/${checked.slug}`);
    expect(detail.body.events.map((e: { type: string }) => e.type)).toEqual(['duplicate_check']);
    expect(detail.body.status).toBe('no_match');
  });

  it('rejects a bad outcome or a missing reason with 422', async () => {
    const lib = await duplicated(81);
    expect((await resolve(lib, { outcome: 'maybe', reason: 'x' })).status).toBe(422);
    expect((await resolve(lib, { outcome: 'unclear' })).status).toBe(422);
    expect((await resolve(lib, { outcome: 'unclear', reason: '   ' })).status).toBe(422);
  });
});
