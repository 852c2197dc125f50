// The public map (issue 17): the bookcases' vector tiles drawn with MapLibre GL JS, served by the app itself.
// Clusters are circles sized by their count, labelled with it (HTML labels: a plain background has no font
// server), and zoom in when clicked; a library opens a popup with its details from the JSON API.
import { Map, NavigationControl, Popup, Marker } from '/assets/maplibre-gl/maplibre-gl.mjs';

const container = document.getElementById('map');
const status = document.getElementById('map-status');
const tileUrl = new URL(container.dataset.tiles, window.location.origin).href
  .replace(/%7B/g, '{')
  .replace(/%7D/g, '}');
const styleUrl = container.dataset.styleUrl || '';

const PLAIN_STYLE = {
  version: 8,
  sources: {},
  layers: [{ id: 'background', type: 'background', paint: { 'background-color': '#e8ecdf' } }],
};

function say(text) {
  status.textContent = text;
}

/** The base map: a style JSON, or raster tiles ({z}/{x}/{y}); the plain background when none or unreachable. */
async function baseStyle() {
  if (!styleUrl) return PLAIN_STYLE;
  if (styleUrl.includes('{z}')) {
    return {
      version: 8,
      sources: {
        base: {
          type: 'raster',
          tiles: [styleUrl],
          tileSize: 256,
          maxzoom: 19,
          attribution: '© OpenStreetMap contributors',
        },
      },
      layers: [PLAIN_STYLE.layers[0], { id: 'base', type: 'raster', source: 'base' }],
    };
  }
  try {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 5000);
    const response = await fetch(styleUrl, { signal: controller.signal });
    clearTimeout(timer);
    if (!response.ok) throw new Error(`style ${response.status}`);
    return await response.json();
  } catch {
    say('The base map is unavailable; showing the bookcases only.');
    return PLAIN_STYLE;
  }
}

function addBookcases(map) {
  map.addSource('bookcases', {
    type: 'vector',
    tiles: [tileUrl],
    minzoom: 0,
    maxzoom: 22,
    attribution: 'Bookcase Directory',
  });
  map.addLayer({
    id: 'clusters',
    type: 'circle',
    source: 'bookcases',
    'source-layer': 'clusters',
    paint: {
      'circle-color': ['step', ['get', 'count'], '#4f9d69', 10, '#d9a13b', 100, '#c4553b'],
      'circle-radius': ['step', ['get', 'count'], 14, 10, 18, 100, 24, 1000, 30],
      'circle-stroke-color': '#ffffff',
      'circle-stroke-width': 2,
      'circle-opacity': 0.9,
    },
  });
  map.addLayer({
    id: 'libraries',
    type: 'circle',
    source: 'bookcases',
    'source-layer': 'libraries',
    paint: {
      'circle-color': '#7a3e9d',
      'circle-radius': 7,
      'circle-stroke-color': '#ffffff',
      'circle-stroke-width': 2,
    },
  });
}

/** Count labels over the rendered clusters, rebuilt whenever the map settles. */
function clusterLabels(map) {
  let labels = [];
  map.on('idle', () => {
    for (const label of labels) label.remove();
    labels = [];
    const seen = new Set();
    for (const feature of map.queryRenderedFeatures({ layers: ['clusters'] })) {
      const [lng, lat] = feature.geometry.coordinates;
      const count = feature.properties.count;
      const key = `${lng.toFixed(6)},${lat.toFixed(6)},${count}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const element = document.createElement('button');
      element.type = 'button';
      element.className = 'cluster-label';
      element.textContent = count >= 1000 ? `${Math.round(count / 100) / 10}k` : String(count);
      element.dataset.count = String(count);
      element.setAttribute('aria-label', `${count} bookcases here: zoom in`);
      element.addEventListener('click', (event) => {
        event.stopPropagation();
        zoomInto(map, [lng, lat]);
      });
      labels.push(new Marker({ element }).setLngLat([lng, lat]).addTo(map));
    }
  });
}

function zoomInto(map, center) {
  map.easeTo({ center, zoom: Math.min(map.getZoom() + 2, 22) });
}

function text(tag, content, className) {
  const element = document.createElement(tag);
  element.textContent = content;
  if (className) element.className = className;
  return element;
}

/** The popup of a library: its name at once, then address and thumbnail from GET /api/v1/libraries/{slug}. */
function showLibrary(map, feature) {
  const { slug, name } = feature.properties;
  const jsonUrl = `/api/v1/libraries/${encodeURIComponent(slug)}`;
  const body = document.createElement('div');
  body.className = 'library-popup';
  body.append(text('h2', name || 'Bookcase'));
  const details = text('p', 'Loading…', 'address');
  body.append(details);
  const link = text('a', 'Details (JSON)');
  link.href = jsonUrl;
  body.append(link);
  new Popup({ maxWidth: '260px' })
    .setLngLat(feature.geometry.coordinates)
    .setDOMContent(body)
    .addTo(map);
  fetch(jsonUrl, { headers: { Accept: 'application/json' } })
    .then((response) =>
      response.ok ? response.json() : Promise.reject(new Error(response.status)),
    )
    .then((library) => {
      details.textContent = [library.address, library.postal_code, library.city, library.country]
        .filter(Boolean)
        .join(', ');
      if (library.thumbnail_url) {
        const image = document.createElement('img');
        image.src = library.thumbnail_url;
        image.alt = `Photo of ${library.name}`;
        image.width = 240;
        details.before(image);
      }
    })
    .catch(() => {
      details.textContent = 'Details are unavailable right now.';
    });
}

function nearMe(map) {
  const button = document.getElementById('near-me');
  button.addEventListener('click', () => {
    if (!navigator.geolocation) {
      say('Your browser cannot tell where you are.');
      return;
    }
    say('Finding your position…');
    navigator.geolocation.getCurrentPosition(
      (position) => {
        say('');
        map.flyTo({ center: [position.coords.longitude, position.coords.latitude], zoom: 14 });
      },
      () => say('Your position is unavailable (permission denied or no signal).'),
      { enableHighAccuracy: false, timeout: 10000, maximumAge: 60000 },
    );
  });
}

async function start() {
  const map = new Map({
    container,
    style: await baseStyle(),
    center: [10, 50],
    zoom: 3,
    maxZoom: 22,
    attributionControl: { compact: true },
  });
  window.bookcaseMap = map;
  map.addControl(new NavigationControl({ showCompass: false }), 'top-right');
  // With a listener, MapLibre reports failures here instead of the console (an offline base map, say).
  map.on('error', (event) => {
    if (event.sourceId !== 'bookcases') say('Some of the base map could not be loaded.');
  });
  map.on('load', () => {
    addBookcases(map);
    clusterLabels(map);
    map.on('click', 'clusters', (event) => zoomInto(map, event.features[0].geometry.coordinates));
    map.on('click', 'libraries', (event) => showLibrary(map, event.features[0]));
    for (const layer of ['clusters', 'libraries']) {
      map.on('mouseenter', layer, () => map.getCanvas().classList.add('pointer'));
      map.on('mouseleave', layer, () => map.getCanvas().classList.remove('pointer'));
    }
  });
  nearMe(map);
}

start().catch(() => say('The map could not start in this browser (WebGL is needed).'));
