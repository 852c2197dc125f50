/** Reference data for `seed`: real cities with real-looking streets and postcodes, German and English texts. */

export type SeedLanguage = 'de' | 'en';

export interface SeedCity {
  name: string;
  country: string;
  lat: number;
  lng: number;
  streets: readonly string[];
  /** `#` a digit, `@` an upper-case letter, anything else literally. */
  postcode: string;
  language: SeedLanguage;
  /** Relative share of the libraries. */
  weight: number;
}

const city = (
  name: string,
  country: string,
  lat: number,
  lng: number,
  postcode: string,
  streets: string[],
  weight = 1,
): SeedCity => ({
  name,
  country,
  lat,
  lng,
  streets,
  postcode,
  weight,
  language: ['DE', 'AT', 'CH'].includes(country) ? 'de' : 'en',
});

// prettier-ignore
export const SEED_CITIES: readonly SeedCity[] = [
  city('Berlin', 'DE', 52.52, 13.405, '10###', ['Kastanienallee', 'Bergmannstraße', 'Oranienstraße', 'Schönhauser Allee'], 4),
  city('Hamburg', 'DE', 53.5511, 9.9937, '20###', ['Eppendorfer Weg', 'Osterstraße', 'Lange Reihe'], 3),
  city('München', 'DE', 48.1374, 11.5755, '80###', ['Leopoldstraße', 'Sendlinger Straße', 'Schleißheimer Straße'], 3),
  city('Köln', 'DE', 50.9375, 6.9603, '50###', ['Aachener Straße', 'Venloer Straße', 'Severinstraße'], 2),
  city('Frankfurt am Main', 'DE', 50.1109, 8.6821, '60###', ['Berger Straße', 'Leipziger Straße', 'Schweizer Straße'], 2),
  city('Stuttgart', 'DE', 48.7758, 9.1829, '70###', ['Tübinger Straße', 'Olgastraße']),
  city('Düsseldorf', 'DE', 51.2277, 6.7735, '40###', ['Lorettostraße', 'Nordstraße']),
  city('Leipzig', 'DE', 51.3397, 12.3731, '04###', ['Karl-Liebknecht-Straße', 'Eisenbahnstraße'], 2),
  city('Dresden', 'DE', 51.0504, 13.7373, '01###', ['Alaunstraße', 'Königsbrücker Straße']),
  city('Freiburg im Breisgau', 'DE', 47.999, 7.8421, '79###', ['Günterstalstraße', 'Habsburgerstraße']),
  city('Münster', 'DE', 51.9607, 7.6261, '48###', ['Hammer Straße', 'Wolbecker Straße']),
  city('Bremen', 'DE', 53.0793, 8.8017, '28###', ['Ostertorsteinweg', 'Am Dobben']),
  city('Hannover', 'DE', 52.3759, 9.732, '30###', ['Limmerstraße', 'Lister Meile']),
  city('Nürnberg', 'DE', 49.4521, 11.0767, '90###', ['Pirckheimerstraße', 'Gostenhofer Hauptstraße']),
  city('Bonn', 'DE', 50.7374, 7.0982, '53###', ['Poppelsdorfer Allee', 'Friedrichstraße']),
  city('Heidelberg', 'DE', 49.3988, 8.6724, '69###', ['Hauptstraße', 'Bergheimer Straße']),
  city('Wien', 'AT', 48.2082, 16.3738, '1##0', ['Mariahilfer Straße', 'Neubaugasse', 'Praterstraße'], 2),
  city('Graz', 'AT', 47.0707, 15.4395, '80##', ['Annenstraße', 'Sackstraße']),
  city('Salzburg', 'AT', 47.8095, 13.055, '50##', ['Linzer Gasse', 'Getreidegasse']),
  city('Zürich', 'CH', 47.3769, 8.5417, '80##', ['Langstrasse', 'Seefeldstrasse']),
  city('Bern', 'CH', 46.948, 7.4474, '30##', ['Kramgasse', 'Lorrainestrasse']),
  city('Basel', 'CH', 47.5596, 7.5886, '40##', ['Klybeckstrasse', 'Güterstrasse']),
  city('London', 'GB', 51.5074, -0.1278, 'N# #@@', ['Camden High Street', 'Brick Lane', 'Portobello Road', 'Upper Street'], 3),
  city('Manchester', 'GB', 53.4808, -2.2426, 'M## #@@', ['Oldham Street', 'Wilmslow Road']),
  city('Edinburgh', 'GB', 55.9533, -3.1883, 'EH# #@@', ['Leith Walk', 'Bruntsfield Place']),
  city('Bristol', 'GB', 51.4545, -2.5879, 'BS# #@@', ['Gloucester Road', 'Stokes Croft']),
  city('Leeds', 'GB', 53.8008, -1.5491, 'LS# #@@', ['Kirkgate', 'Headingley Lane']),
  city('Dublin', 'IE', 53.3498, -6.2603, 'D0# @#@#', ['Camden Street', 'Phibsborough Road']),
  city('New York', 'US', 40.7128, -74.006, '10###', ['Bedford Avenue', 'Amsterdam Avenue', 'Court Street'], 3),
  city('Portland', 'US', 45.5152, -122.6784, '972##', ['Alberta Street', 'Hawthorne Boulevard'], 2),
  city('Seattle', 'US', 47.6062, -122.3321, '981##', ['Fremont Avenue North', 'Greenwood Avenue North']),
  city('San Francisco', 'US', 37.7749, -122.4194, '941##', ['Valencia Street', 'Haight Street']),
  city('Chicago', 'US', 41.8781, -87.6298, '606##', ['Milwaukee Avenue', 'Clark Street'], 2),
  city('Minneapolis', 'US', 44.9778, -93.265, '554##', ['Lyndale Avenue South', 'Hennepin Avenue']),
  city('Austin', 'US', 30.2672, -97.7431, '787##', ['South Congress Avenue', 'East 6th Street']),
  city('Boston', 'US', 42.3601, -71.0589, '021##', ['Massachusetts Avenue', 'Centre Street']),
  city('Madison', 'US', 43.0731, -89.4012, '537##', ['Williamson Street', 'Monroe Street']),
  city('Toronto', 'CA', 43.6532, -79.3832, 'M#@ #@#', ['Queen Street West', 'Danforth Avenue'], 2),
  city('Vancouver', 'CA', 49.2827, -123.1207, 'V#@ #@#', ['Commercial Drive', 'Main Street']),
  city('Montreal', 'CA', 45.5019, -73.5674, 'H#@ #@#', ['Rue Saint-Denis', 'Boulevard Saint-Laurent']),
  city('Melbourne', 'AU', -37.8136, 144.9631, '30##', ['Brunswick Street', 'Sydney Road'], 2),
  city('Sydney', 'AU', -33.8688, 151.2093, '20##', ['King Street', 'Glebe Point Road']),
  city('Wellington', 'NZ', -41.2866, 174.7756, '60##', ['Cuba Street', 'Aro Street']),
  city('Amsterdam', 'NL', 52.3676, 4.9041, '10## @@', ['Haarlemmerdijk', 'Javastraat'], 2),
  city('Utrecht', 'NL', 52.0907, 5.1214, '35## @@', ['Oudegracht', 'Twijnstraat']),
  city('Brussels', 'BE', 50.8503, 4.3517, '10#0', ['Rue Haute', 'Chaussée d’Ixelles']),
  city('Paris', 'FR', 48.8566, 2.3522, '750##', ['Rue Oberkampf', 'Rue de Belleville', 'Boulevard Voltaire'], 2),
  city('Lyon', 'FR', 45.764, 4.8357, '6900#', ['Rue de la République', 'Cours Gambetta']),
  city('Milano', 'IT', 45.4642, 9.19, '201##', ['Via Torino', 'Corso Buenos Aires']),
  city('Roma', 'IT', 41.9028, 12.4964, '001##', ['Via del Corso', 'Via Merulana']),
  city('Madrid', 'ES', 40.4168, -3.7038, '280##', ['Calle de Fuencarral', 'Calle de Toledo']),
  city('Barcelona', 'ES', 41.3874, 2.1686, '080##', ['Carrer de Verdi', 'Carrer Gran de Gràcia']),
  city('København', 'DK', 55.6761, 12.5683, '2###', ['Nørrebrogade', 'Istedgade']),
  city('Stockholm', 'SE', 59.3293, 18.0686, '1## ##', ['Götgatan', 'Hornsgatan']),
  city('Oslo', 'NO', 59.9139, 10.7522, '0###', ['Thorvald Meyers gate', 'Markveien']),
  city('Kraków', 'PL', 50.0647, 19.945, '3#-###', ['Floriańska', 'Józefa']),
  city('Praha', 'CZ', 50.0755, 14.4378, '1## ##', ['Vinohradská', 'Národní']),
  city('Tokyo', 'JP', 35.6762, 139.6503, '1##-####', ['Omotesando', 'Kitazawa']),
  city('Cape Town', 'ZA', -33.9249, 18.4241, '80##', ['Long Street', 'Bree Street']),
];

/** `{street}`, `{city}`, `{place}` are filled in. */
export const NAME_TEMPLATES: Record<SeedLanguage, readonly string[]> = {
  de: [
    'Offener Bücherschrank {street}',
    'Bücherschrank am {place}',
    'Bücherzelle {street}',
    'Bücherbox {street}',
    'Tauschregal am {place}',
    'Öffentlicher Bücherschrank {city}',
    'Lesezeichen {street}',
  ],
  en: [
    'Little Free Library {street}',
    'Book Swap Box on {street}',
    'Community Bookshelf at the {place}',
    'Phone Box Library {street}',
    'Free Book Exchange {city}',
    'Neighbourhood Book Nook',
  ],
};

export const PLACES: Record<SeedLanguage, readonly string[]> = {
  de: [
    'Marktplatz',
    'Spielplatz',
    'Rathaus',
    'Bahnhof',
    'Kirchplatz',
    'Stadtpark',
    'Brunnen',
    'Gemeindezentrum',
  ],
  en: [
    'Park',
    'Station',
    'Market',
    'Church',
    'Playground',
    'Community Centre',
    'Library',
    'Town Hall',
  ],
};

/** `{n}` becomes a small number. Two or three are combined per library. */
export const DESCRIPTION_SENTENCES: Record<SeedLanguage, readonly string[]> = {
  de: [
    'Ein wetterfester Bücherschrank mit {n} Regalen voller Bücher.',
    'Romane, Krimis und Kinderbücher zum Tauschen und Mitnehmen.',
    'Bring ein Buch, nimm ein Buch.',
    'Betreut von Nachbarinnen und Nachbarn aus dem Viertel.',
    'In einer umgebauten Telefonzelle neben der Bushaltestelle.',
    'Rund um die Uhr geöffnet und nachts beleuchtet.',
    'Viele Sachbücher und Reiseführer, gelegentlich auch Zeitschriften.',
    'Die Bücher werden jede Woche sortiert; bitte keine Lexika abgeben.',
  ],
  en: [
    'A weatherproof wooden box with {n} shelves of books.',
    "Novels, crime fiction and children's books to take and share.",
    'Take a book, leave a book.',
    'Looked after by volunteers from the neighbourhood.',
    'Inside a converted red telephone box next to the bus stop.',
    'Open around the clock and lit at night.',
    'Plenty of cookbooks, travel guides and poetry.',
    'The books are sorted every week; please no encyclopaedias.',
  ],
};

export const OPERATORS: Record<SeedLanguage, readonly string[]> = {
  de: [
    'Bürgerverein {city}',
    'Stadtbibliothek {city}',
    'Lions Club {city}',
    'Nachbarschaftsinitiative {street}',
  ],
  en: [
    '{city} Public Library',
    'Rotary Club of {city}',
    'Friends of {street}',
    '{city} Community Trust',
  ],
};

/** A small seeded PRNG (mulberry32): the same seed gives the same data set, so benchmarks are repeatable. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
