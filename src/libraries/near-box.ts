/** WGS 84 semi-major axis (m): no parallel's radius of curvature N is smaller. */
const SEMI_MAJOR_AXIS_M = 6_378_137;
/** WGS 84 meridional radius of curvature at the equator (m), a·(1 − e²): the smallest radius anywhere. */
const MIN_MERIDIONAL_RADIUS_M = 6_335_439;
/** Widens the box a little beyond the bound below, against rounding (a 5 km box grows by 5 m). */
const MARGIN = 1.001;
const DEGREES = 180 / Math.PI;

export interface LngLatBox {
  minLng: number;
  minLat: number;
  maxLng: number;
  maxLat: number;
}

/**
 * A longitude/latitude box that holds every point within `radiusMeters` (geodesic distance on the WGS 84
 * spheroid, as ST_DWithin on geography measures it) of the centre, or null when no such box is a plain one: the
 * circle reaches a pole or crosses the antimeridian. Callers use it only to narrow an exact test, never instead of
 * one.
 *
 * Along a geodesic of length r the latitude changes at most r / M_min (M is never below a·(1 − e²)), and the
 * longitude at most r / (a · cos φ_max), since N ≥ a and the path never gets closer to a pole than φ_max = |φ| + Δφ.
 */
export function nearBox(lat: number, lng: number, radiusMeters: number): LngLatBox | null {
  const reach = radiusMeters * MARGIN;
  const dLat = (reach / MIN_MERIDIONAL_RADIUS_M) * DEGREES;
  const poleward = Math.abs(lat) + dLat;
  if (poleward >= 89) return null;
  const dLng = (reach / (SEMI_MAJOR_AXIS_M * Math.cos(poleward / DEGREES))) * DEGREES;
  if (lng - dLng <= -180 || lng + dLng >= 180) return null;
  return { minLng: lng - dLng, minLat: lat - dLat, maxLng: lng + dLng, maxLat: lat + dLat };
}
