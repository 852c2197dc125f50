import { InitialPlatform1763700000000 } from './1763700000000-initial-platform.js';
import { Accounts1763800000000 } from './1763800000000-accounts.js';
import { Libraries1763900000000 } from './1763900000000-libraries.js';
import { MapContribution1764000000000 } from './1764000000000-map-contribution.js';
import { AdminConsole1764100000000 } from './1764100000000-admin-console.js';
import { ProximityCount1764200000000 } from './1764200000000-proximity-count.js';
import { MediaReferences1764400000000 } from './1764400000000-media-references.js';
import { LibraryMapCells1764600000000 } from './1764600000000-library-map-cells.js';
import { ModerationAudit1764700000000 } from './1764700000000-moderation-audit.js';
import { OpenData1764800000000 } from './1764800000000-open-data.js';
import { IdempotencyKeys1764900000000 } from './1764900000000-idempotency-keys.js';
import { MapCellFacets1765100000000 } from './1765100000000-map-cell-facets.js';
import { Notifications1765300000000 } from './1765300000000-notifications.js';
import { LibraryCounts1765400000000 } from './1765400000000-library-counts.js';
import { FavouritesPageIndex1765400000001 } from './1765400000001-favourites-page-index.js';
import { TextSearchCounts1765500000000 } from './1765500000000-text-search-counts.js';
import { LibraryPlaceCounts1765550000000 } from './1765550000000-library-place-counts.js';
import { MapCellsCovering1765700000000 } from './1765700000000-map-cells-covering.js';
import { FavouritesApproved1765800000000 } from './1765800000000-favourites-approved.js';
import { SearchPrefixBitmaps1766000000000 } from './1766000000000-search-prefix-bitmaps.js';
import { CountrySearchBitmaps1766000000001 } from './1766000000001-country-search-bitmaps.js';
import { ProximityUnitVector1766100000000 } from './1766100000000-proximity-unit-vector.js';
import { PlaceCountsByCountry1766100000001 } from './1766100000001-place-counts-by-country.js';
import { MapCellsRecountPlan1766900000000 } from './1766900000000-map-cells-recount-plan.js';
import { SearchBitWalk1767000000000 } from './1767000000000-search-bit-walk.js';
import { LibrariesWithoutPhoto1767100000000 } from './1767100000000-libraries-without-photo.js';
import { SearchTokenBitmaps1767500000000 } from './1767500000000-search-token-bitmaps.js';
import { LibraryPlacePairs1767700000000 } from './1767700000000-library-place-pairs.js';
import { SearchShortGrams1767800000000 } from './1767800000000-search-short-grams.js';
import { LibrariesWithoutPhotoByCountry1768002000000 } from './1768002000000-libraries-without-photo-by-country.js';
import { LibrariesCountryPlaces1768100000000 } from './1768100000000-libraries-country-places.js';
import { PlaceCountsShortGrams1768100000001 } from './1768100000001-place-counts-short-grams.js';
import { LibrariesWithoutPhotoNewest1768110000000 } from './1768110000000-libraries-without-photo-newest.js';
import { LibrariesWithoutPhotoPlaces1768200000000 } from './1768200000000-libraries-without-photo-places.js';
import { DropCountryCreatedIndex1768200000001 } from './1768200000001-drop-country-created-index.js';

/** Every migration, oldest first. Listed explicitly so the app, the CLI and the tests load the same set. */
export const MIGRATIONS = [
  InitialPlatform1763700000000,
  Accounts1763800000000,
  Libraries1763900000000,
  MapContribution1764000000000,
  AdminConsole1764100000000,
  ProximityCount1764200000000,
  MediaReferences1764400000000,
  LibraryMapCells1764600000000,
  ModerationAudit1764700000000,
  OpenData1764800000000,
  IdempotencyKeys1764900000000,
  MapCellFacets1765100000000,
  Notifications1765300000000,
  LibraryCounts1765400000000,
  FavouritesPageIndex1765400000001,
  TextSearchCounts1765500000000,
  LibraryPlaceCounts1765550000000,
  MapCellsCovering1765700000000,
  FavouritesApproved1765800000000,
  SearchPrefixBitmaps1766000000000,
  CountrySearchBitmaps1766000000001,
  ProximityUnitVector1766100000000,
  PlaceCountsByCountry1766100000001,
  MapCellsRecountPlan1766900000000,
  SearchBitWalk1767000000000,
  LibrariesWithoutPhoto1767100000000,
  SearchTokenBitmaps1767500000000,
  LibraryPlacePairs1767700000000,
  SearchShortGrams1767800000000,
  LibrariesWithoutPhotoByCountry1768002000000,
  LibrariesCountryPlaces1768100000000,
  PlaceCountsShortGrams1768100000001,
  LibrariesWithoutPhotoNewest1768110000000,
  LibrariesWithoutPhotoPlaces1768200000000,
  DropCountryCreatedIndex1768200000001,
];
