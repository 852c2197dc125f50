import { nearBox, sphereBounds } from './near-box.js';

describe('nearBox', () => {
  it('is centred on the point and wider in longitude away from the equator', () => {
    const equator = nearBox(0, 10, 5000)!;
    const berlin = nearBox(52.52, 13.405, 5000)!;
    expect(equator.minLat).toBeCloseTo(-equator.maxLat, 12);
    expect((equator.minLng + equator.maxLng) / 2).toBeCloseTo(10, 12);
    // 5 km is 0.045° of latitude (at most), plus the margin.
    expect(berlin.maxLat - 52.52).toBeGreaterThan(0.0452);
    expect(berlin.maxLat - 52.52).toBeLessThan(0.0454);
    expect(berlin.maxLng - 13.405).toBeGreaterThan((equator.maxLng - 10) * 1.6);
  });

  it('grows with the radius', () => {
    const small = nearBox(48, 2, 1000)!;
    const large = nearBox(48, 2, 100_000)!;
    expect(large.maxLat - 48).toBeGreaterThan((small.maxLat - 48) * 99);
    expect(large.maxLng - 2).toBeGreaterThan((small.maxLng - 2) * 99);
  });

  it('gives no box when the circle reaches a pole or crosses the antimeridian', () => {
    expect(nearBox(88.5, 20, 100_000)).toBeNull();
    expect(nearBox(-89.5, 20, 1000)).toBeNull();
    expect(nearBox(-16.5, 179.99, 5000)).toBeNull();
    expect(nearBox(65, -179.95, 5000)).toBeNull();
    expect(nearBox(-16.5, 179.9, 5000)).not.toBeNull();
  });

  it('bounds the geodesic against the sphere by the circle’s latitudes, Earth’s bounds without a box', () => {
    const berlin = sphereBounds(52.52, 13.405, 50_000);
    // M and N between 52.07° and 52.97°, widened by 1e-5: a band a quarter of Earth's 0.994 … 1.005.
    expect(berlin.shortest).toBeGreaterThan(1.0006);
    expect(berlin.longest).toBeLessThan(1.0033);
    const equator = sphereBounds(0.1, 10, 25_000);
    expect(equator.shortest).toBeLessThan(0.9945);
    expect(equator.longest).toBeLessThan(1.0012);
    expect(sphereBounds(88.6, 15.6, 100_000)).toEqual({ shortest: 0.994, longest: 1.005 });
    expect(sphereBounds(-16.5, 179.98, 10_000)).toEqual({ shortest: 0.994, longest: 1.005 });
  });
});
