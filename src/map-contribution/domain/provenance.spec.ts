// Map database provenance: the mapdb_source blocker (split from eligibility.spec.ts).
import { identifiesMapDatabase, isMapElementIdentifier, namesMapDatabase } from './eligibility.js';

describe('map database provenance (mapdb_source)', () => {
  it.each([
    'osm',
    'OSM',
    'OSM import',
    'osm_import',
    'osm-import 2024',
    'OSMImport',
    'importOSM',
    'osmimport',
    'osm2pgsql',
    'OpenStreetMap',
    'openstreetmap contributors',
    'Open Street Map',
    'Open-Street-Map export',
    'mapdb',
    'MapDB dump',
    'overpass turbo',
    'overpass-api.de',
    'JOSM',
    'nominatim',
    'geofabrik extract',
    'www.osm.org',
  ])('source %j names the map database', (source) => {
    expect(namesMapDatabase(source)).toBe(true);
    expect(identifiesMapDatabase({ source, externalId: '' })).toBe(true);
  });

  it.each([
    '',
    'geojson',
    'import',
    'Stadt Köln open data',
    'Kosmos Verlag',
    'web',
    'seed',
    'roadmap',
  ])('source %j does not', (source) => {
    expect(namesMapDatabase(source)).toBe(false);
  });

  it.each([
    'node/123',
    'way/45',
    'relation/6',
    'Node/123',
    'node:123',
    'node 123',
    'way_45',
    'relation-6',
    'n123',
    'w45',
    'r6',
    'N123',
    'osm:node:1',
    'osm:n1',
    'osm_id=5',
    'https://www.openstreetmap.org/node/1',
    'http://osm.org/way/2',
    'https://openstreetmap.org/relation/3/history',
    '123',
    ' 4711 ',
    '-17',
  ])('external id %j is a map element identifier', (externalId) => {
    expect(isMapElementIdentifier(externalId)).toBe(true);
    expect(identifiesMapDatabase({ source: '', externalId })).toBe(true);
  });

  it.each([
    '',
    '   ',
    'BC-000123',
    'lib-42',
    '3f2b9c1e-8a44-4f7e-9d7a-2a1c5f1e0b77',
    'https://example.org/node/5',
    'nodes/12a',
    'Q64',
  ])('external id %j is not', (externalId) => {
    expect(isMapElementIdentifier(externalId)).toBe(false);
  });
});
