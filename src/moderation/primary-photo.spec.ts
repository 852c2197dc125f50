import { primaryPhotoChange } from './moderation.service.js';

describe('primaryPhotoChange (the community-photo promotion rule)', () => {
  it('promotes an approved photo only when the library has no primary photo', () => {
    expect(primaryPhotoChange('approved', null, 'photos/a.jpg')).toBe('promote');
    expect(primaryPhotoChange('approved', 'libraries/x.jpg', 'photos/a.jpg')).toBe('keep');
    expect(primaryPhotoChange('approved', 'photos/a.jpg', 'photos/a.jpg')).toBe('keep');
  });

  it('hands the role on when the primary photo is rejected or returned to pending', () => {
    expect(primaryPhotoChange('rejected', 'photos/a.jpg', 'photos/a.jpg')).toBe('hand_on');
    expect(primaryPhotoChange('pending', 'photos/a.jpg', 'photos/a.jpg')).toBe('hand_on');
  });

  it('leaves the primary photo alone when another photo loses its approval', () => {
    expect(primaryPhotoChange('rejected', 'libraries/x.jpg', 'photos/a.jpg')).toBe('keep');
    expect(primaryPhotoChange('pending', null, 'photos/a.jpg')).toBe('keep');
  });
});
