/**
 * The query parameters of the realistic list scenarios (issue 22): `list-filters` and `proximity-random`, and the
 * page numbers of every realistic scenario. One module for scripts/bench.mjs (which draws them with Math.random) and
 * bench/list-replay.mjs (which draws the same shapes with a seeded generator, so a replay is what the bench sends).
 * `random` is called in the same order for the same request, so a seed gives the same requests in every build.
 */

/** Page numbers as people reach them: mostly the first, some the next few, rarely deep. */
export function realisticPage(random = Math.random) {
  const r = random();
  if (r < 0.7) return 1;
  if (r < 0.9) return 2 + Math.floor(random() * 3);
  return 5 + Math.floor(random() * 16);
}

/** A page parameter: page 1 half the time left out, as the apps send it. */
export function pageOf(random = Math.random) {
  const page = realisticPage(random);
  return page === 1 && random() < 0.5 ? {} : { page };
}

/**
 * Generators of `list-filters` and `proximity-random` requests (their query parameters; `undefined` for a parameter
 * left out) over the seed's cities (src/cli/commands/seed-data.ts) and postal `fragments` drawn from the seeded data.
 */
export function listParamGenerators(SEED_CITIES, fragments, random = Math.random) {
  const pick = (items) => items[Math.floor(random() * items.length)];
  const countries = [...new Set(SEED_CITIES.map((c) => c.country))];
  const lngs = SEED_CITIES.map((c) => c.lng);
  const lats = SEED_CITIES.map((c) => c.lat);
  const span = {
    west: Math.min(...lngs) - 1,
    east: Math.max(...lngs) + 1,
    south: Math.min(...lats) - 1,
    north: Math.max(...lats) + 1,
  };
  return {
    // Each filter on or off independently, so all combinations occur; page sizes of the apps (10, 20, 50).
    'list-filters': () => {
      const city = pick(SEED_CITIES);
      return {
        country: ((r) => (r < 0.4 ? city.country : r < 0.5 ? pick(countries) : undefined))(
          random(),
        ),
        has_photo: random() < 0.3 ? String(random() < 0.7) : undefined,
        city: random() < 0.3 ? city.name.slice(0, 3 + Math.floor(random() * 5)) : undefined,
        postal_code:
          random() < 0.15 ? pick(fragments).slice(0, 2 + Math.floor(random() * 2)) : undefined,
        page_size: random() < 0.7 ? undefined : pick(['10', '50']),
        ...pageOf(random),
      };
    },
    // 60 % within ~50 km of a seed city (dense, suburbs, countryside), 40 % anywhere in the seed's span (mostly
    // empty areas); radius from 1 to 50 km or none (nearest first over everything).
    'proximity-random': () => {
      let lat;
      let lng;
      if (random() < 0.6) {
        const city = pick(SEED_CITIES);
        lat = city.lat + (random() - 0.5) * 0.9;
        lng = city.lng + (random() - 0.5) * 1.4;
      } else {
        lat = span.south + random() * (span.north - span.south);
        lng = span.west + random() * (span.east - span.west);
      }
      return {
        lat: lat.toFixed(5),
        lng: lng.toFixed(5),
        radius_km: random() < 0.75 ? String(pick([1, 2, 5, 10, 25, 50])) : undefined,
        ...pageOf(random),
      };
    },
  };
}
