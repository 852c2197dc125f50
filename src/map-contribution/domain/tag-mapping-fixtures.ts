/** Fixtures shared by the tag-mapping, write-gate and eligibility specs; not part of the build. */
import type { LibraryFacts, VerifiedValues } from './types.js';

/** An eligible library with every mappable value set. */
export function library(overrides: Partial<LibraryFacts> = {}): LibraryFacts {
  return {
    id: 7,
    status: 'approved',
    submissionOrigin: 'user',
    createdBy: 42,
    mapdbSubmissionAllowed: true,
    source: '',
    externalId: '',
    hasPendingChanges: false,
    hasPendingPhoto: false,
    name: 'Leseecke am Lindenplatz',
    address: 'Lindenweg 12',
    lat: 52.52,
    lng: 13.405,
    capacity: 80,
    isIndoor: true,
    isLit: false,
    wheelchairAccessible: 'limited',
    brand: 'Little Free Library',
    operator: 'Bürgerverein Mitte',
    website: 'https://buergerverein-mitte.example/leseecke',
    aiGeneratedFields: [],
    ...overrides,
  };
}

export const ALL: VerifiedValues = { name: true, brand: true, operator: true, website: true };
