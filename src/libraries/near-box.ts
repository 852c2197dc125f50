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

/** WGS 84 first eccentricity squared. */
const ECCENTRICITY_SQUARED = 0.00669437999014;
/** Mean Earth radius (m): the sphere of PostGIS's `use_spheroid = false` distances (6,371,008.77) and of ours. */
const SPHERE_RADIUS_M = 6_371_008.8;
/** Anywhere on Earth (the radii of curvature 6,335,439 … 6,399,594 m), rounded outwards. */
const ANYWHERE = { shortest: 0.994, longest: 1.005 };
/**
 * Relative widening of the local bounds against rounding and PostGIS's sphere (6,371,008.77 m, 5e-9 smaller than
 * ours): 1e-5, half a metre at 50 km.
 */
const BOUND_MARGIN = 1e-5;

/**
 * Bounds of the geodesic distance on the WGS 84 spheroid (what ST_DWithin on geography measures) against the
 * spherical distance of the mean radius R (what `_ST_DWithin(…, false)` measures), for the points within
 * `radiusMeters` of the centre: geodesic ≥ shortest · sphere, and ≤ longest · sphere, for every point whose geodesic
 * or sphere distance from the centre is at most about `radiusMeters`.
 *
 * Mapping a path to the other surface at the same latitudes and longitudes changes its length by the ratio of the
 * radii of curvature, between M(φ)/R along a meridian and N(φ)/R along a parallel, at the latitudes it passes; both M
 * and N grow with |φ| and M ≤ N, so over latitudes φ₁ … φ₂ the ratio lies between M(min |φ|)/R and N(max |φ|)/R. A
 * path of length at most r (either distance) from the centre stays within nearBox's latitudes, so those bound it.
 * Anywhere on Earth that is 0.99442 … 1.00449 (rounded to 0.994 … 1.005); within 50 km of Berlin it is 1.00023 …
 * 1.00315, so the band where only the spheroid decides is a quarter as wide. Without a box (a pole, the antimeridian)
 * the bounds are Earth's.
 */
export function sphereBounds(
  lat: number,
  lng: number,
  radiusMeters: number,
): { shortest: number; longest: number } {
  const box = nearBox(lat, lng, radiusMeters);
  if (!box) return ANYWHERE;
  const lowest =
    box.minLat <= 0 && box.maxLat >= 0 ? 0 : Math.min(Math.abs(box.minLat), Math.abs(box.maxLat));
  const highest = Math.max(Math.abs(box.minLat), Math.abs(box.maxLat));
  const w = (latitude: number) => 1 - ECCENTRICITY_SQUARED * Math.sin(latitude / DEGREES) ** 2;
  const meridional = (SEMI_MAJOR_AXIS_M * (1 - ECCENTRICITY_SQUARED)) / w(lowest) ** 1.5;
  const normal = SEMI_MAJOR_AXIS_M / Math.sqrt(w(highest));
  return {
    shortest: Math.max(ANYWHERE.shortest, (meridional / SPHERE_RADIUS_M) * (1 - BOUND_MARGIN)),
    longest: Math.min(ANYWHERE.longest, (normal / SPHERE_RADIUS_M) * (1 + BOUND_MARGIN)),
  };
}
