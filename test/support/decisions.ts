import request from 'supertest';
import type { HttpTarget, RegisteredUser } from './auth.js';
import { call, insertReport, postPhoto } from './community.js';

/**
 * Takes one decision of every library, staged-edit, photo and report kind about a library of `owner`'s, through
 * the moderation API, oldest first: rejected (reason `rejectionReason`), returned to pending, approved (by
 * `approver`), a staged edit applied then another rejected, a community photo approved, rejected and returned to
 * pending, a report resolved, reopened and dismissed.
 */
export async function takeEveryDecision(
  http: HttpTarget,
  databaseUrl: string,
  library: { id: number; slug: string },
  people: { staff: RegisteredUser; owner: RegisteredUser; approver?: RegisteredUser },
  rejectionReason: string,
): Promise<{ photoId: number; reportId: number }> {
  const { staff, owner, approver = staff } = people;
  const slug = library.slug;
  const patch = (body: object, user = staff) =>
    call(http, 'patch', `/libraries/moderation/${slug}`, user.access, body).expect(200);
  await patch({ status: 'rejected', rejection_reason: rejectionReason });
  await patch({ status: 'pending' });
  await patch({ status: 'approved' }, approver);
  for (const action of ['approve', 'reject']) {
    await request(http)
      .patch(`/api/v1/libraries/${slug}`)
      .set('Authorization', `Bearer ${owner.access}`)
      .field('name', `Staged ${action}`)
      .expect(200);
    await call(http, 'post', `/libraries/moderation/${slug}/changes`, staff.access, {
      action,
    }).expect(200);
  }
  const photo = (await postPhoto(http, owner.access, slug)).body as { id: number };
  for (const status of ['approved', 'rejected', 'pending'])
    await call(http, 'patch', `/libraries/moderation/photos/${photo.id}`, staff.access, {
      status,
    }).expect(200);
  const reportId = await insertReport(databaseUrl, { library_id: library.id });
  for (const status of ['resolved', 'open', 'dismissed'])
    await call(http, 'patch', `/libraries/moderation/reports/${reportId}`, staff.access, {
      status,
    }).expect(200);
  return { photoId: photo.id, reportId };
}
